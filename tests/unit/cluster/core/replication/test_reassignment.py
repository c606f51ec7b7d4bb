"""Moving a partition's replica list the way Kafka's reassignment does."""
from __future__ import annotations

import pytest

from cluster.core.replication import (
    NOT_LEADER, Acks, AckFailed, CancelReassignment, FollowerFetch, LeaderChanged,
    MoveCompleted, MovePhase, MoveProgressed, MoveRolledBack, MoveStarted, ProduceRequest,
    ReassignPartition, ReplicasChanged, ReplicationError, ReplicationTick, Resolution,
    SpuOffline, SpuOnline, add_topic, consume, handle, move_progress, moves_in_flight,
    new_cluster, produce, spu_receive_notice)
from cluster.testing.invariants import InvariantChecker


def _cluster(min_lrs: int = 1, max_lag: int = 1000):
    state = new_cluster(range(6))
    add_topic(state, "t", [[0, 1, 2]], min_lrs=min_lrs, max_lag=max_lag)
    produce(state, ProduceRequest("t", 0, Acks.ALL, 4))
    handle(state, ReplicationTick())
    return state


def _of(actions, kind):
    return [a for a in actions if isinstance(a, kind)]


def _rs(state):
    return state.replica_set("t", 0)


def test_new_replicas_join_as_followers_outside_the_lrs():
    state = _cluster()
    actions = handle(state, ReassignPartition("t", 0, (3, 4, 1)))
    assert actions == [MoveStarted("t", 0, (0, 1, 2), (3, 4, 1)),
                       ReplicasChanged("t", 0, (0, 1, 2, 3, 4), (3, 4), (0, 2))]
    rs = _rs(state)
    assert rs.replicas == [0, 1, 2, 3, 4] and rs.lrs == [0, 1, 2] and rs.leader == 0
    assert rs.replica[3].log == [] and state.sets_of(3) == [rs]


def test_a_new_replica_joins_the_lrs_once_it_has_caught_up_to_the_hw():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (0, 1, 3)))
    handle(state, FollowerFetch("t", 0, 3, max_records=2))
    assert 3 not in _rs(state).lrs and len(_rs(state).replica[3].log) == 2
    handle(state, FollowerFetch("t", 0, 3, max_records=2))
    assert 3 in _rs(state).lrs


def test_the_old_replicas_leave_only_once_every_target_replica_is_in_the_lrs():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (0, 3, 4)))
    handle(state, FollowerFetch("t", 0, 3))
    handle(state, ReplicationTick())  # 3 is in; 4 has not fetched at decision time
    assert _rs(state).replicas == [0, 1, 2, 3, 4]
    actions = handle(state, ReplicationTick())
    assert _rs(state).replicas == [0, 3, 4] and _rs(state).move is None
    assert _of(actions, MoveCompleted) == [MoveCompleted("t", 0, (0, 3, 4), 0)]
    assert ReplicasChanged("t", 0, (0, 3, 4), (), ()) in actions


def test_leadership_moves_to_the_targets_first_replica_when_the_leader_leaves():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (3, 4, 1)))
    handle(state, ReplicationTick())
    actions = handle(state, ReplicationTick())
    assert _of(actions, LeaderChanged) == [LeaderChanged("t", 0, 0, 3, 2)]
    rs = _rs(state)
    assert rs.leader == 3 and rs.replicas == [3, 4, 1] and rs.lrs == [3, 4, 1]
    assert rs.replica[3].claims_leadership and 0 not in rs.replica


def test_the_leader_stays_when_it_is_in_the_target_unless_the_move_asks_for_the_preferred():
    stays, moves = _cluster(), _cluster()
    handle(stays, ReassignPartition("t", 0, (3, 0, 1)))
    handle(moves, ReassignPartition("t", 0, (3, 0, 1), elect_preferred=True))
    for state in (stays, moves):
        handle(state, ReplicationTick())
        handle(state, ReplicationTick())
    assert _rs(stays).leader == 0 and _rs(moves).leader == 3
    assert _rs(stays).replicas == _rs(moves).replicas == [3, 0, 1]


def test_every_committed_record_survives_the_move_and_hw_never_goes_back():
    state = _cluster(min_lrs=2)
    checker = InvariantChecker()
    checker.check(state)
    handle(state, ReassignPartition("t", 0, (3, 4, 5)))
    for _ in range(3):
        actions = handle(state, ReplicationTick())
        checker.check(state, actions)
        assert len(_rs(state).lrs) >= 2
    assert _rs(state).replicas == [3, 4, 5]
    assert consume(state, "t", 0).records == (0, 1, 2, 3)


def test_moving_leadership_fails_acks_all_records_still_pending_with_not_leader():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (3, 1, 2)))
    handle(state, ReplicationTick())
    produce(state, ProduceRequest("t", 0, Acks.ALL, 1))
    [failed] = _of(handle(state, ReplicationTick()), AckFailed)
    assert failed.code == NOT_LEADER and failed.records == ((4, 4),)


def test_a_new_replica_whose_spu_is_offline_makes_the_move_wait():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (0, 1, 3), timeout_ms=None))
    handle(state, SpuOffline(3))
    actions = handle(state, ReplicationTick(now_ms=10_000_000))
    assert _of(actions, MoveProgressed)[0].phase is MovePhase.STALLED
    assert _rs(state).move is not None and _rs(state).replicas == [0, 1, 2, 3]
    handle(state, SpuOnline(3))
    handle(state, ReplicationTick())
    handle(state, ReplicationTick())
    assert _rs(state).replicas == [0, 1, 3] and _rs(state).move is None


def test_past_its_timeout_a_stalled_move_rolls_back_to_the_original_list():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (0, 1, 3), timeout_ms=500))
    handle(state, SpuOffline(3))
    handle(state, ReplicationTick(now_ms=1000))
    assert _rs(state).move is not None
    actions = handle(state, ReplicationTick(now_ms=1500))
    [rolled] = _of(actions, MoveRolledBack)
    assert rolled.replicas == (0, 1, 2) and "SPU 3 offline for 500 ms" in rolled.reason
    assert _rs(state).replicas == [0, 1, 2] and 3 not in _rs(state).replica
    assert state.sets_of(3) == []


def test_a_move_whose_leader_fails_goes_through_a_normal_election_first():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (3, 4, 5)))
    actions = handle(state, SpuOffline(0))
    assert _rs(state).resolution is Resolution.CANDIDATE_FOUND
    assert move_progress(state, _rs(state)).phase is MovePhase.ELECTING
    handle(state, ReplicationTick())
    assert _rs(state).replicas == [0, 1, 2, 3, 4, 5]
    notice = actions[-2]
    handle(state, spu_receive_notice(state, notice))
    assert _rs(state).leader == 1
    handle(state, ReplicationTick())
    handle(state, ReplicationTick())
    assert _rs(state).replicas == [3, 4, 5] and _rs(state).leader == 3


def test_cancel_rolls_back_to_the_original_list_at_once_when_no_new_replica_is_in_the_lrs():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (3, 4, 5)))
    actions = handle(state, CancelReassignment("t", 0))
    assert _of(actions, MoveRolledBack) == [MoveRolledBack("t", 0, (0, 1, 2), "cancelled")]
    assert _rs(state).replicas == [0, 1, 2] and _rs(state).move is None


def _new_replicas_in_the_lrs_and_the_old_followers_down(target):
    state = _cluster(min_lrs=2)
    handle(state, ReassignPartition("t", 0, target, timeout_ms=None))
    handle(state, FollowerFetch("t", 0, 3))
    handle(state, FollowerFetch("t", 0, 4))
    handle(state, SpuOffline(1))
    handle(state, SpuOffline(2))
    assert _rs(state).lrs == [0, 3, 4]
    return state


def test_cancel_waits_rather_than_leave_fewer_than_min_lrs_in_the_lrs():
    state = _new_replicas_in_the_lrs_and_the_old_followers_down((0, 3, 4, 5))
    handle(state, SpuOffline(5))
    actions = handle(state, CancelReassignment("t", 0))
    assert _of(actions, MoveProgressed)[0].phase is MovePhase.ROLLING_BACK
    assert _rs(state).replicas == [0, 1, 2, 3, 4, 5]
    handle(state, SpuOnline(1))
    handle(state, ReplicationTick())
    handle(state, ReplicationTick())
    assert _rs(state).replicas == [0, 1, 2] and _rs(state).lrs == [0, 1]


def test_cancel_finishes_the_move_when_only_going_forward_keeps_min_lrs():
    state = _new_replicas_in_the_lrs_and_the_old_followers_down((0, 3, 4))
    actions = handle(state, CancelReassignment("t", 0))
    assert _of(actions, MoveCompleted) == [MoveCompleted("t", 0, (0, 3, 4), 0)]
    assert _rs(state).replicas == [0, 3, 4] and _rs(state).lrs == [0, 3, 4]


def test_cancel_moves_leadership_back_to_an_original_replica_when_a_new_one_leads():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (3, 4, 5)))
    handle(state, FollowerFetch("t", 0, 3))
    handle(state, SpuOffline(1))
    handle(state, SpuOffline(2))
    notice = handle(state, SpuOffline(0))[-2]
    handle(state, spu_receive_notice(state, notice))
    assert _rs(state).leader == 3
    handle(state, SpuOnline(1))
    handle(state, ReplicationTick())
    actions = handle(state, CancelReassignment("t", 0))
    assert LeaderChanged("t", 0, 3, 1, _rs(state).epoch) in actions
    assert _rs(state).replicas == [0, 1, 2] and _rs(state).leader == 1


def test_move_progress_counts_the_records_the_new_replicas_have_copied():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (0, 3, 4)))
    handle(state, FollowerFetch("t", 0, 3, max_records=3))
    handle(state, FollowerFetch("t", 0, 4, max_records=1))
    [p] = moves_in_flight(state)
    assert (p.adding, p.removing, p.records_copied, p.records_total) == ((3, 4), (1, 2), 4, 8)
    assert p.phase is MovePhase.CATCHING_UP and p.caught_up == ()


@pytest.mark.parametrize("target, reason", [
    ((), "non-empty and unique"), ((3, 3, 4), "non-empty and unique"),
    ((3, 9), "unknown SPU"), ((3,), "fewer than the topic's min_lrs 2")])
def test_a_bad_target_is_refused_and_nothing_changes(target, reason):
    state = _cluster(min_lrs=2)
    with pytest.raises(ReplicationError, match=reason):
        handle(state, ReassignPartition("t", 0, target))
    assert _rs(state).replicas == [0, 1, 2] and _rs(state).move is None


def test_a_second_move_of_the_same_partition_and_a_cancel_without_one_are_refused():
    state = _cluster()
    with pytest.raises(ReplicationError, match="no reassignment in flight"):
        handle(state, CancelReassignment("t", 0))
    handle(state, ReassignPartition("t", 0, (3, 4, 5)))
    with pytest.raises(ReplicationError, match="already in flight"):
        handle(state, ReassignPartition("t", 0, (1, 2, 3)))


def test_a_target_equal_to_the_current_list_changes_nothing():
    state = _cluster()
    assert handle(state, ReassignPartition("t", 0, (0, 1, 2))) == []
    assert _rs(state).move is None


def test_a_replica_removed_by_a_move_no_longer_reacts_to_its_spu_going_offline():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (3, 4, 5)))
    handle(state, ReplicationTick())
    handle(state, ReplicationTick())
    assert handle(state, SpuOffline(0)) == []
    assert _of(handle(state, SpuOffline(3)), LeaderChanged)
