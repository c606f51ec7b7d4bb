from __future__ import annotations

import pytest

from cluster.core.replication import (
    NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND, NOT_LEADER, LEADER_LOST,
    UNKNOWN_TOPIC_OR_PARTITION, AckFailed, Acks, FollowerFetch, Isolation, NoLeader,
    ProduceRequest, RecordsAcknowledged, SpuOffline, add_topic, consume, handle,
    new_cluster, produce, replication_step)


def cluster(min_lrs=1, replicas=(1, 2, 3), **kw):
    state = new_cluster([1, 2, 3])
    add_topic(state, "t", [list(replicas)], min_lrs=min_lrs, **kw)
    return state, state.replica_set("t", 0)


def acked(actions, acks=None):
    return [r for a in actions if isinstance(a, RecordsAcknowledged)
            and (acks is None or a.acks is acks) for r in a.records]


def test_acks_0_is_appended_but_never_acknowledged():
    state, rs = cluster()
    result = produce(state, ProduceRequest("t", 0, Acks.NONE, 2))
    assert result.accepted and rs.leo == 2
    assert acked(result.actions) == [] and rs.pending == []
    assert acked(replication_step(state)) == []


def test_acks_1_is_acknowledged_as_soon_as_the_leader_appends():
    state, rs = cluster()
    result = produce(state, ProduceRequest("t", 0, Acks.LEADER, 2))
    assert acked(result.actions, Acks.LEADER) == [(0, result.record_ids[0]), (1, result.record_ids[1])]
    assert rs.hw == 0


def test_acks_all_is_acknowledged_only_once_the_hw_passes_it():
    state, rs = cluster()
    result = produce(state, ProduceRequest("t", 0, Acks.ALL, 1))
    assert acked(result.actions) == [] and rs.pending == [(0, result.record_ids[0])]
    assert acked(handle(state, FollowerFetch("t", 0, 2))) == []
    actions = handle(state, FollowerFetch("t", 0, 3))
    assert acked(actions, Acks.ALL) == [(0, result.record_ids[0])]
    assert rs.hw == 1 and rs.pending == []


def test_acks_all_is_refused_below_min_lrs_and_nothing_is_appended():
    state, rs = cluster(min_lrs=3)
    handle(state, SpuOffline(3))
    before = state.next_record_id
    result = produce(state, ProduceRequest("t", 0, Acks.ALL, 1))
    assert not result.accepted and result.code == NOT_ENOUGH_REPLICAS
    assert "needs 3" in result.reason and "has 2" in result.reason
    assert rs.leo == 0 and rs.pending == [] and state.next_record_id == before


def test_acks_1_is_accepted_even_when_the_lrs_is_below_min_lrs():
    state, rs = cluster(min_lrs=3)
    handle(state, SpuOffline(3))
    assert produce(state, ProduceRequest("t", 0, Acks.LEADER, 1)).accepted


def test_min_lrs_defaults_to_one():
    state, rs = cluster(replicas=(1,))
    assert state.topics["t"].min_lrs == 1
    result = produce(state, ProduceRequest("t", 0, Acks.ALL, 1))
    assert acked(result.actions, Acks.ALL) and rs.hw == 1  # a sole replica commits at once


def test_acks_all_committed_after_the_lrs_shrank_below_min_lrs_fails_not_acknowledged():
    state, rs = cluster(min_lrs=2, replicas=(1, 2))
    produce(state, ProduceRequest("t", 0, Acks.ALL, 1))
    actions = handle(state, SpuOffline(2))
    assert rs.hw == 1 and acked(actions) == []
    assert [a.code for a in actions if isinstance(a, AckFailed)] == [NOT_ENOUGH_REPLICAS_AFTER_APPEND]


def test_pending_acks_all_fail_when_the_leader_goes_offline():
    state, rs = cluster()
    result = produce(state, ProduceRequest("t", 0, Acks.ALL, 2))
    actions = handle(state, SpuOffline(1))
    failed = [a for a in actions if isinstance(a, AckFailed)]
    assert failed[0].code == LEADER_LOST and len(failed[0].records) == 2
    assert rs.pending == [] and result.accepted


def test_produce_is_refused_without_a_leader():
    state, rs = cluster()
    handle(state, SpuOffline(1))
    result = produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    assert result.code == NOT_LEADER and "CandidateFound" in result.reason


def test_produce_to_an_unknown_partition_is_refused_through_handle_too():
    state, _ = cluster()
    [action] = handle(state, ProduceRequest("t", 7, Acks.LEADER, 1))
    assert action.code == UNKNOWN_TOPIC_OR_PARTITION


def test_a_committed_consumer_reads_only_below_hw_and_uncommitted_up_to_leo():
    state, rs = cluster()
    ids = produce(state, ProduceRequest("t", 0, Acks.LEADER, 3)).record_ids
    handle(state, FollowerFetch("t", 0, 2))
    handle(state, FollowerFetch("t", 0, 3, max_records=1))
    assert rs.hw == 1
    assert consume(state, "t", 0).records == ids[:1]
    loose = consume(state, "t", 0, isolation=Isolation.UNCOMMITTED)
    assert loose.records == ids and loose.next_offset == loose.leo == 3
    assert consume(state, "t", 0, 1).records == ()


def test_consume_honours_max_records():
    state, rs = cluster(replicas=(1,))
    ids = produce(state, ProduceRequest("t", 0, Acks.LEADER, 5)).record_ids
    assert consume(state, "t", 0, 1, max_records=2).records == ids[1:3]


def test_consume_without_a_leader_raises_no_leader():
    state, _ = cluster()
    handle(state, SpuOffline(1))
    with pytest.raises(NoLeader):
        consume(state, "t", 0)
