from __future__ import annotations

from cluster.core.replication import (
    Acks, FollowerFetch, LrsChanged, ProduceRequest, ReplicaTruncated, SpuOffline, SpuOnline,
    add_topic, handle, new_cluster, produce, replication_step)

LEADER, F1, F2 = 1, 2, 3


def seed_example():
    """001's figure: LEO leader 4, follower-1 3, follower-2 2."""
    state = new_cluster([LEADER, F1, F2])
    add_topic(state, "seed", [[LEADER, F1, F2]])
    produce(state, ProduceRequest("seed", 0, Acks.LEADER, 2))
    replication_step(state)
    produce(state, ProduceRequest("seed", 0, Acks.LEADER, 2))
    handle(state, FollowerFetch("seed", 0, F1, max_records=1))
    return state, state.replica_set("seed", 0)


def leos(rs):
    return [rs.replica[s].leo for s in rs.replicas]


def test_seed_example_leo_4_3_2_gives_lrs_3_and_hw_2():
    _, rs = seed_example()
    assert leos(rs) == [4, 3, 2]
    assert len(rs.lrs) == 3
    assert rs.hw == 2


def test_hw_advances_when_a_lagging_follower_goes_offline():
    state, rs = seed_example()
    actions = handle(state, SpuOffline(F2))
    assert rs.lrs == [LEADER, F1] and len(rs.lrs) == 2
    assert rs.hw == 3
    assert LrsChanged("seed", 0, LEADER, (LEADER, F1), 3) in actions


def test_hw_is_the_minimum_leo_over_the_lrs():
    state, rs = seed_example()
    handle(state, FollowerFetch("seed", 0, F2))
    assert leos(rs) == [4, 3, 4] and rs.hw == 3
    handle(state, FollowerFetch("seed", 0, F1))
    assert rs.hw == 4


def test_leader_sends_only_the_missing_records_in_order():
    state, rs = seed_example()
    before = list(rs.replica[F2].log)
    handle(state, FollowerFetch("seed", 0, F2))
    assert rs.replica[F2].log[:2] == before
    assert rs.replica[F2].log == rs.replica[LEADER].log


def test_follower_learns_the_hw_from_the_leader_capped_at_its_own_leo():
    state, rs = seed_example()
    assert rs.replica[F1].hw == 2
    handle(state, FollowerFetch("seed", 0, F2))
    handle(state, FollowerFetch("seed", 0, F1))
    assert rs.replica[F1].hw == 4 and rs.replica[LEADER].hw == 4
    assert rs.replica[F2].hw == 3  # told at its own last fetch


def test_hw_never_moves_backwards_when_a_follower_far_behind_reports_in():
    state = new_cluster([1, 2, 3])
    add_topic(state, "t", [[1, 2, 3]])
    handle(state, SpuOffline(3))
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 5))
    replication_step(state)
    assert state.replica_set("t", 0).hw == 5
    handle(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    handle(state, SpuOnline(3))
    rs = state.replica_set("t", 0)
    handle(state, FollowerFetch("t", 0, 3, max_records=2))
    assert rs.replica[3].leo == 2 and 3 not in rs.lrs and rs.hw == 5


def test_a_fetch_from_an_offline_follower_or_to_a_set_without_leader_does_nothing():
    state, rs = seed_example()
    handle(state, SpuOffline(F2))
    assert handle(state, FollowerFetch("seed", 0, F2)) == [] and rs.replica[F2].leo == 2
    handle(state, SpuOffline(LEADER))
    assert handle(state, FollowerFetch("seed", 0, F1)) == []


def test_replication_step_syncs_every_online_replica_set():
    state = new_cluster(range(4))
    add_topic(state, "t", [[0, 1, 2], [1, 2, 3], [2, 3, 0]])
    for p in range(3):
        produce(state, ProduceRequest("t", p, Acks.ALL, 3))
    replication_step(state)
    for rs in state.replica_sets.values():
        assert leos(rs) == [3, 3, 3] and rs.hw == 3
        assert all(r.hw == 3 for r in rs.replica.values())


def test_replication_step_skips_replica_sets_without_a_leader():
    state = new_cluster([1, 2])
    add_topic(state, "t", [[1, 2]])
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    replication_step(state)
    handle(state, SpuOffline(1))
    assert replication_step(state) == []


def test_a_follower_holding_records_the_leader_lacks_is_cut_back_on_fetch():
    state, rs = seed_example()
    rs.replica[F2].log.append(999_999)  # a tail from an older leader
    actions = handle(state, FollowerFetch("seed", 0, F2))
    assert ReplicaTruncated("seed", 0, F2, 3, 2, f"diverged from leader {LEADER}",
                            (999_999,)) in actions
    assert rs.replica[F2].log == rs.replica[LEADER].log


def test_a_fetch_round_for_some_sets_leaves_the_others_as_they_were():
    state = new_cluster([LEADER, F1, F2])
    add_topic(state, "seed", [[LEADER, F1, F2], [LEADER, F1, F2]])
    for partition in (0, 1):
        produce(state, ProduceRequest("seed", partition, Acks.ALL, 2))
    replication_step(state, keys=[("seed", 1), ("gone", 0)])
    assert leos(state.replica_set("seed", 1)) == [2, 2, 2]
    assert state.replica_set("seed", 1).hw == 2
    assert leos(state.replica_set("seed", 0)) == [2, 0, 0]
