"""Preferred-leader election and the leader imbalance rule (Kafka's, on small clusters)."""
from __future__ import annotations

import pytest

from cluster.core.replication import (
    Acks, ElectPreferredLeaders, LeaderChanged, LeaderImbalance, LeaderMove, NotMoved,
    NotMovedReason, ProduceRequest, ReassignPartition, RebalanceLeaders,
    ReplicationError, ReplicationTick, SpuOffline, SpuOnline, add_topic,
    elect_preferred_leaders, handle, imbalanced_spus, leader_imbalance, new_cluster,
    plan_preferred, produce, rebalance_leaders, spu_receive_notice,
    transfer_leadership)
from cluster.core.replication.events import NotifyCandidate


def _fail_over(state, spu):
    for a in handle(state, SpuOffline(spu)):
        if isinstance(a, NotifyCandidate):
            handle(state, spu_receive_notice(state, a))


def _after_an_outage_of_spu_0(back_in_lrs: bool = True):
    """a: [0,1,2] [1,2,0] [2,0,1]; b: [0,1] [1,0]. SPU 0 failed over, then came back."""
    state = new_cluster(range(4))
    add_topic(state, "a", [[0, 1, 2], [1, 2, 0], [2, 0, 1]])
    add_topic(state, "b", [[0, 1], [1, 0]])
    for key in state.replica_sets:
        produce(state, ProduceRequest(*key, Acks.LEADER, 2))
    handle(state, ReplicationTick())
    _fail_over(state, 0)
    handle(state, SpuOnline(0))
    if back_in_lrs:
        handle(state, ReplicationTick())
    return state


def _leaders(state):
    return {k: rs.leader for k, rs in sorted(state.replica_sets.items())}


def test_after_an_outage_the_preferred_election_gives_leadership_back_to_the_first_replicas():
    state = _after_an_outage_of_spu_0()
    assert _leaders(state)[("a", 0)] == 1 and _leaders(state)[("b", 0)] == 1
    result = elect_preferred_leaders(state)
    assert result.moved == (LeaderMove("a", 0, 1, 0), LeaderMove("b", 0, 1, 0))
    assert result.not_moved == ()
    assert result.already_preferred == (("a", 1), ("a", 2), ("b", 1))
    assert _leaders(state) == {("a", 0): 0, ("a", 1): 1, ("a", 2): 2, ("b", 0): 0, ("b", 1): 1}
    assert LeaderChanged("a", 0, 1, 0, state.replica_set("a", 0).epoch) in result.actions


def test_a_preferred_election_for_one_topic_leaves_the_others_alone():
    state = _after_an_outage_of_spu_0()
    result = elect_preferred_leaders(state, "b")
    assert result.moved == (LeaderMove("b", 0, 1, 0),)
    assert _leaders(state)[("a", 0)] == 1


def test_a_preferred_leader_not_yet_back_in_the_lrs_is_not_moved_and_says_why():
    state = _after_an_outage_of_spu_0(back_in_lrs=False)
    result = elect_preferred_leaders(state, "b")
    assert result.moved == ()
    assert result.not_moved == (NotMoved("b", 0, 0, NotMovedReason.PREFERRED_NOT_IN_LRS),)


def test_a_preferred_leader_that_is_offline_is_not_moved_and_says_why():
    state = _after_an_outage_of_spu_0()
    _fail_over(state, 0)
    result = elect_preferred_leaders(state, "a")
    assert result.not_moved == (NotMoved("a", 0, 0, NotMovedReason.PREFERRED_OFFLINE),)


def test_partitions_without_a_leader_or_with_a_move_in_flight_are_not_moved():
    state = _after_an_outage_of_spu_0()
    handle(state, ReassignPartition("a", 0, (0, 1, 3)))
    handle(state, SpuOffline(1))
    handle(state, SpuOffline(0))  # b/0 and b/1 have no live replica left
    result = plan_preferred(state)
    reasons = {(n.topic, n.partition): n.reason for n in result.not_moved}
    assert reasons[("a", 0)] is NotMovedReason.MOVE_IN_FLIGHT
    assert reasons[("b", 0)] is NotMovedReason.NO_LEADER


def test_planning_a_preferred_election_changes_nothing():
    state = _after_an_outage_of_spu_0()
    before = _leaders(state)
    assert plan_preferred(state).moved == (LeaderMove("a", 0, 1, 0), LeaderMove("b", 0, 1, 0))
    assert _leaders(state) == before


def test_the_election_event_returns_the_leader_changes():
    state = _after_an_outage_of_spu_0()
    actions = handle(state, ElectPreferredLeaders("a"))
    assert [a for a in actions if isinstance(a, LeaderChanged)] == [
        LeaderChanged("a", 0, 1, 0, state.replica_set("a", 0).epoch)]


def test_an_unknown_topic_is_refused():
    with pytest.raises(ReplicationError, match="unknown topic"):
        elect_preferred_leaders(_after_an_outage_of_spu_0(), "nope")


def _ten_partitions_preferring_spu_0(moved_away: int):
    state = new_cluster([0, 1])
    add_topic(state, "t", [[0, 1]] * 10 + [[1, 0]] * 2)
    handle(state, ReplicationTick())
    for p in range(moved_away):
        transfer_leadership(state, state.replica_set("t", p), 1, "test")
    return state


def test_imbalance_is_partitions_not_led_over_partitions_preferred():
    state = _ten_partitions_preferring_spu_0(moved_away=3)
    assert leader_imbalance(state) == {0: LeaderImbalance(0, 10, 3, 0.3),
                                       1: LeaderImbalance(1, 2, 0, 0.0)}


def test_an_spu_exactly_at_the_ten_percent_threshold_is_not_over_it():
    assert imbalanced_spus(_ten_partitions_preferring_spu_0(moved_away=1)) == []
    assert imbalanced_spus(_ten_partitions_preferring_spu_0(moved_away=2)) == [0]
    assert imbalanced_spus(_ten_partitions_preferring_spu_0(moved_away=1), 0.05) == [0]


def test_the_rebalance_check_elects_preferred_leaders_only_for_spus_over_the_threshold():
    quiet = _ten_partitions_preferring_spu_0(moved_away=1)
    assert rebalance_leaders(quiet).moved == () and quiet.replica_set("t", 0).leader == 1
    busy = _ten_partitions_preferring_spu_0(moved_away=2)
    actions = handle(busy, RebalanceLeaders())
    assert len([a for a in actions if isinstance(a, LeaderChanged)]) == 2
    assert leader_imbalance(busy)[0].not_led == 0


def test_a_rebalance_threshold_outside_zero_to_one_is_refused():
    with pytest.raises(ReplicationError, match="threshold"):
        rebalance_leaders(_ten_partitions_preferring_spu_0(0), 10)
