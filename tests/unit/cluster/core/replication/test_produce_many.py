"""produce_many: one call for a producer writing to many partitions, the same rules as produce."""
from __future__ import annotations

from cluster.core.replication import (NOT_LEADER, Acks, ProduceRequest, RecordsAcknowledged,
                                      SpuOffline, add_topic, handle, new_cluster, produce,
                                      produce_many)


def cluster():
    state = new_cluster([1, 2, 3])
    add_topic(state, "t", [[1, 2, 3], [2, 3, 1], [3, 1, 2]], min_lrs=2)
    return state


def test_it_appends_what_produce_would_append_partition_by_partition():
    one, many = cluster(), cluster()
    for p, n in [(0, 2), (1, 1), (2, 3)]:
        produce(one, ProduceRequest("t", p, Acks.LEADER, n))
    produce_many(many, [(("t", 0), 2), (("t", 1), 1), (("t", 2), 3)], Acks.LEADER)
    assert [rs.replica[rs.leader].log for rs in many.replica_sets.values()] == \
        [rs.replica[rs.leader].log for rs in one.replica_sets.values()]
    assert many.next_record_id == one.next_record_id == 6


def test_it_counts_records_by_outcome_and_refuses_a_leaderless_partition():
    state = cluster()
    handle(state, SpuOffline(1))
    handle(state, SpuOffline(2))
    handle(state, SpuOffline(3))
    _, outcomes = produce_many(state, [(("t", 0), 2), (("t", 1), 1)], Acks.LEADER)
    assert outcomes == {NOT_LEADER: 3}


def test_acks_1_records_are_counted_not_acknowledged_one_action_each():
    actions, outcomes = produce_many(cluster(), [(("t", 0), 1), (("t", 1), 1)], Acks.LEADER)
    assert outcomes == {None: 2}
    assert not [a for a in actions if isinstance(a, RecordsAcknowledged)]


def test_acks_all_records_wait_as_pending_like_produce():
    state = cluster()
    produce_many(state, [(("t", 0), 2)], Acks.ALL)
    assert [o for o, _ in state.replica_set("t", 0).pending] == [0, 1]
