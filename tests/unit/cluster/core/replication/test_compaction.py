from __future__ import annotations

from cluster.core.replication import (Acks, NotifyCandidate, ProduceRequest, PromotionSucceeded, SpuOffline,
                                      SpuOnline, add_topic, consume, handle, new_cluster,
                                      produce, replication_step, spu_receive_notice)
from cluster.core.replication.compaction import COMPACTED, compact


def cluster_with(records: int, replicas=(0, 1, 2)):
    state = new_cluster(replicas)
    add_topic(state, "t", [list(replicas)])
    produce(state, ProduceRequest("t", 0, Acks.LEADER, records))
    replication_step(state)
    return state, state.replica_set("t", 0)


def test_compaction_keeps_offsets_hw_and_the_retained_tail():
    state, rs = cluster_with(10)
    before = list(rs.replica[0].log)
    assert compact(rs, retain=4) == 6
    for r in rs.replica.values():
        assert r.leo == 10 and r.start == 6 and r.log == before[6:]
        assert r.records(0, 10) == [COMPACTED] * 6 + before[6:]
    assert rs.hw == 10


def test_compaction_never_touches_uncommitted_records():
    state, rs = cluster_with(4)
    handle(state, SpuOffline(2))
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 3))
    leader_records = list(rs.replica[0].log)
    assert compact(rs, retain=0) == rs.hw == 4
    assert rs.replica[0].log == leader_records[4:] and rs.replica[0].leo == 7


def test_compaction_waits_until_the_start_moves_by_a_whole_step():
    _, rs = cluster_with(10)
    assert compact(rs, retain=4, step=8) == 0
    assert rs.replica[0].start == 0 and len(rs.replica[0].log) == 10


def test_followers_keep_replicating_after_compaction():
    state, rs = cluster_with(6)
    compact(rs, retain=2)
    produce(state, ProduceRequest("t", 0, Acks.ALL, 2))
    replication_step(state)
    assert rs.hw == 8 and all((r.start, r.log) == (4, rs.replica[0].log)
                              for r in rs.replica.values())


def test_a_replica_behind_the_log_start_jumps_to_the_leaders_start():
    state, rs = cluster_with(2)
    handle(state, SpuOffline(2))
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 8))
    replication_step(state)
    compact(rs, retain=1)
    handle(state, SpuOnline(2))
    replication_step(state)
    assert rs.replica[2].start == rs.replica[0].start == 9
    assert rs.replica[2].log == rs.replica[0].log and 2 in rs.lrs


def test_failover_after_compaction_keeps_the_retained_committed_records():
    state, rs = cluster_with(6)
    compact(rs, retain=3)
    kept = list(rs.replica[0].log)  # offsets 3..5, the retained ones
    notice = next(a for a in handle(state, SpuOffline(0)) if isinstance(a, NotifyCandidate))
    reply = spu_receive_notice(state, notice)
    assert isinstance(reply, PromotionSucceeded)
    handle(state, reply)
    assert rs.leader in (1, 2)
    assert list(consume(state, "t", 0, 3).records) == kept


def test_a_replica_holds_only_the_retained_records_however_far_the_log_went():
    state, rs = cluster_with(0)
    for _ in range(50):
        produce(state, ProduceRequest("t", 0, Acks.LEADER, 1000))
        replication_step(state)
        compact(rs, retain=100, step=10)
    for r in rs.replica.values():
        assert r.leo == 50_000 and r.start == 49_900 and len(r.log) == 100


def test_a_follower_compacted_below_its_leo_reads_compacted_then_its_records():
    state, rs = cluster_with(10)
    compact(rs, retain=3)
    follower = rs.replica[1]
    assert [follower.at(o) for o in (0, 6, 7)] == [COMPACTED, COMPACTED, rs.replica[0].log[0]]
    follower.truncate(5)
    assert (follower.start, follower.log, follower.leo) == (5, [], 5)


def test_a_retention_budget_leaves_the_configured_retention_while_it_fits():
    from cluster.core.replication.compaction import retention_for

    assert retention_for(10_000, 10_000, 100_000_000) == 10_000
    assert retention_for(1, 10_000, 100_000_000) == 10_000


def test_a_retention_budget_shared_by_more_partitions_keeps_a_1_2_5_share_each():
    from cluster.core.replication.compaction import retention_for

    # 100,000 partitions at the default budget: durability.md's advice, 1,000 each.
    assert retention_for(100_000, 10_000, 100_000_000) == 1_000
    assert [retention_for(n, 10_000, 100_000_000) for n in (10_001, 30_000, 60_000)] == [
        5_000, 2_000, 1_000]
    assert retention_for(7, 10_000, 1_000) == 100  # a share of 142
    assert retention_for(10**9, 10_000, 100_000_000) == 1  # never less than one record


def test_no_budget_or_a_retention_of_zero_keeps_what_is_configured():
    from cluster.core.replication.compaction import retention_for

    assert retention_for(100_000, 10_000, 0) == 10_000
    assert retention_for(100_000, 0, 100_000_000) == 0  # 0 keeps every record


def test_partitions_produced_to_in_step_reach_their_cuts_at_different_steps():
    # A producer's round robin: every partition gains a record a step. Each compaction
    # rewrites a set's records key whole (adapters/set_records.py); cut at HW - retain
    # alone, all 100 sets would compact at the same step, every 10 steps.
    state = new_cluster([0, 1, 2])
    add_topic(state, "t", [[0, 1, 2]] * 100)
    sets = [state.replica_set("t", p) for p in range(100)]
    compacted_at: list[int] = []
    for _ in range(60):
        for p in range(100):
            produce(state, ProduceRequest("t", p, Acks.LEADER, 1))
        replication_step(state)
        starts = [rs.replica[0].start for rs in sets]
        for rs in sets:
            compact(rs, retain=20, step=10)
        compacted_at.append(sum(rs.replica[0].start != s for rs, s in zip(sets, starts)))
        for rs in sets:
            kept_below_hw = rs.hw - rs.replica[0].start
            assert rs.replica[0].start == 0 or 20 <= kept_below_hw <= 29
    assert sum(compacted_at) >= 300  # each set about once in ten steps, after the first 20
    assert max(compacted_at) <= 20, compacted_at  # a tenth of them a step, give or take
