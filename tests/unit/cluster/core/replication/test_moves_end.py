"""Issue 36 item 2: a move ends within its timeout whatever it waits on (a kept replica
offline, a new replica cut from its leader, a rollback that would cost LRS members), and
one that cannot end safely either way ends keeping every replica."""
from __future__ import annotations

from cluster.core.replication import (
    Acks, CancelReassignment, FollowerFetch, MoveCompleted, MoveRolledBack, ProduceRequest,
    ReassignPartition, ReplicationTick, SpuOffline, add_topic, handle, links, new_cluster,
    produce, waiting_on)


def _cluster(min_lrs: int = 1):
    state = new_cluster(range(6))
    add_topic(state, "t", [[0, 1, 2]], min_lrs=min_lrs, max_lag=1000)
    produce(state, ProduceRequest("t", 0, Acks.ALL, 4))
    handle(state, ReplicationTick())
    return state


def _rs(state):
    return state.replica_set("t", 0)


def _ticks(state, start: int, end: int, step: int = 100) -> list:
    actions = []
    for now in range(start, end + 1, step):
        actions += handle(state, ReplicationTick(now_ms=now))
        if _rs(state).move is None:
            return actions
    return actions


def test_a_kept_replica_offline_rolls_the_move_back_at_its_timeout():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (0, 1, 3), timeout_ms=500, now_ms=1000))
    handle(state, SpuOffline(1))
    handle(state, ReplicationTick(now_ms=1000))
    assert 3 in _rs(state).lrs and _rs(state).move is not None
    assert waiting_on(state, _rs(state), _rs(state).move) == "kept replica SPU 1 offline"
    actions = _ticks(state, 1100, 1700)
    [rolled] = [a for a in actions if isinstance(a, MoveRolledBack)]
    assert rolled.replicas == (0, 1, 2)
    assert rolled.reason.startswith("kept replica SPU 1 offline for 500 ms")
    assert _rs(state).move is None


def test_a_new_replica_cut_from_its_leader_rolls_back_at_its_timeout():
    state = _cluster()
    links.cut_links(state, links.CutLinks("spu", (3,), (0,)))
    handle(state, ReassignPartition("t", 0, (0, 1, 3), timeout_ms=500, now_ms=1000))
    handle(state, ReplicationTick(now_ms=1000))
    assert _rs(state).replica[3].leo == 0
    actions = _ticks(state, 1100, 1700)
    [rolled] = [a for a in actions if isinstance(a, MoveRolledBack)]
    assert rolled.reason.startswith("new replica SPU 3 cut from leader SPU 0 for 500 ms")
    assert _rs(state).replicas == [0, 1, 2]


def test_a_move_that_copies_does_not_time_out():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (0, 1, 3), timeout_ms=500, now_ms=1000))
    for now in range(1000, 5000, 100):
        produce(state, ProduceRequest("t", 0, Acks.LEADER, now))
        handle(state, FollowerFetch("t", 0, 3, max_records=1, now_ms=now))
    move = _rs(state).move
    assert move is not None and not move.rolling_back, "still copying 4 s on: no timeout"
    handle(state, FollowerFetch("t", 0, 3, now_ms=5000))
    _ticks(state, 5000, 5200)
    assert _rs(state).replicas == [0, 1, 3]


def _rollback_that_would_cost_the_lrs(min_lrs: int, target: tuple[int, ...]):
    """New replicas 3 and 4 in the LRS, the old followers 1 and 2 and the new 5 down."""
    state = _cluster(min_lrs=min_lrs)
    handle(state, ReassignPartition("t", 0, target, timeout_ms=500, now_ms=1000))
    handle(state, FollowerFetch("t", 0, 3))
    handle(state, FollowerFetch("t", 0, 4))
    for spu in (1, 2, 5):
        handle(state, SpuOffline(spu))
    assert _rs(state).lrs == [0, 3, 4]
    handle(state, CancelReassignment("t", 0))
    handle(state, ReplicationTick(now_ms=1000))
    assert _rs(state).move is not None, "the rollback waits: it would leave one LRS member"
    return state


def test_a_cancelled_move_whose_rollback_is_unsafe_ends_at_its_target_within_the_timeout():
    state = _rollback_that_would_cost_the_lrs(2, (0, 3, 4, 5))
    actions = _ticks(state, 1100, 1700)
    assert [a for a in actions if isinstance(a, MoveCompleted)] == \
        [MoveCompleted("t", 0, (0, 3, 4, 5), 0)]
    assert _rs(state).lrs == [0, 3, 4], "no LRS member dropped"


def test_a_move_that_cannot_end_safely_either_way_ends_keeping_every_replica():
    state = _rollback_that_would_cost_the_lrs(3, (3, 4, 5))
    actions = _ticks(state, 1100, 1700)
    [ended] = [a for a in actions if isinstance(a, MoveRolledBack)]
    assert "ended keeping every replica" in ended.reason
    assert _rs(state).move is None and _rs(state).replicas == [0, 1, 2, 3, 4, 5]
    assert _rs(state).lrs == [0, 3, 4] and _rs(state).leader == 0


def test_a_move_without_a_timeout_still_waits_for_ever():
    state = _cluster()
    handle(state, ReassignPartition("t", 0, (0, 1, 3), timeout_ms=None, now_ms=1000))
    handle(state, SpuOffline(1))
    _ticks(state, 1000, 100_000, step=1000)
    assert _rs(state).move is not None
