from __future__ import annotations

import pytest

from cluster.core.replication import (
    Acks, LeaderChanged, NotifyCandidate, ProduceRequest, ReplicationError, Resolution,
    add_topic, consume, new_cluster, produce, replication_step)


def test_leo_is_the_next_offset_so_leo_4_means_records_0_to_3():
    state = new_cluster([1])
    add_topic(state, "t", [[1]])
    result = produce(state, ProduceRequest("t", 0, Acks.LEADER, 4))
    rs = state.replica_set("t", 0)
    assert result.base_offset == 0
    assert rs.leo == 4
    assert consume(state, "t", 0, 3).records == (result.record_ids[3],)
    assert consume(state, "t", 0, 4).records == ()


def test_a_new_topic_is_online_with_the_first_replica_leading_and_live_replicas_in_the_lrs():
    state = new_cluster([1, 2, 3], offline=[3])
    actions = add_topic(state, "t", {0: [1, 2, 3]})
    rs = state.replica_set("t", 0)
    assert (rs.leader, rs.resolution, rs.lrs, rs.hw) == (1, Resolution.ONLINE, [1, 2], 0)
    assert LeaderChanged("t", 0, None, 1, 1) in actions


def test_a_topic_whose_preferred_leader_is_offline_starts_with_an_election():
    state = new_cluster([1, 2, 3], offline=[1])
    actions = add_topic(state, "t", [[1, 2, 3]])
    rs = state.replica_set("t", 0)
    assert rs.resolution is Resolution.CANDIDATE_FOUND and rs.leader is None
    assert [a.candidate for a in actions if isinstance(a, NotifyCandidate)] == [2]


@pytest.mark.parametrize("replica_map, message", [
    ([[1, 9]], "unknown SPU"),
    ([[1, 1]], "unique"),
    ([[]], "non-empty"),
    ([], "at least one partition"),
])
def test_add_topic_refuses_a_bad_replica_map_and_stores_nothing(replica_map, message):
    state = new_cluster([1, 2])
    with pytest.raises(ReplicationError, match=message):
        add_topic(state, "t", replica_map)
    assert not state.replica_sets


def test_add_topic_refuses_a_duplicate_name_and_min_lrs_below_one():
    state = new_cluster([1])
    add_topic(state, "t", [[1]])
    with pytest.raises(ReplicationError, match="already exists"):
        add_topic(state, "t", [[1]])
    with pytest.raises(ReplicationError, match="min_lrs"):
        add_topic(state, "u", [[1]], min_lrs=0)


@pytest.mark.parametrize("raw, acks", [("all", Acks.ALL), (-1, Acks.ALL), (0, Acks.NONE),
                                       ("1", Acks.LEADER)])
def test_acks_accept_0_1_and_all(raw, acks):
    assert Acks.parse(raw) is acks


def test_acks_refuse_anything_else():
    with pytest.raises(ReplicationError, match="acks must be"):
        Acks.parse(2)


def test_sets_of_finds_every_replica_set_on_an_spu():
    state = new_cluster([1, 2, 3])
    add_topic(state, "a", [[1, 2], [2, 3]])
    add_topic(state, "b", [[3, 1]])
    replication_step(state)
    assert sorted(rs.key for rs in state.sets_of(1)) == [("a", 0), ("b", 0)]
