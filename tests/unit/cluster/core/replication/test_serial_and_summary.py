from __future__ import annotations

import dataclasses
import json

import pytest

from cluster.core.replication import (
    Acks, AckFailed, ClusterState, FollowerFetch, LeaderChanged, LrsChanged,
    NotifyCandidate, ProduceAccepted, ProduceRefused, ProduceRequest, PromotionFailed,
    PromotionSucceeded, ReconcileElections, RecordsAcknowledged, ReplicaTruncated,
    ReplicationTick, Resolution, ResolutionChanged, SpuOffline, SpuOnline,
    StartElectionTimer, TimerFired, add_topic, cluster_from_dict, cluster_to_dict,
    handle, message_from_dict, message_to_dict, new_cluster, partition_list,
    partition_summary, produce, replica_set_from_dict, replica_set_to_dict,
    replication_step)
from cluster.core.replication import (
    CancelReassignment, ElectPreferredLeaders, ElectUncleanLeader, MoveCompleted,
    MovePhase, MoveProgressed, MoveRolledBack, MoveStarted, ReassignPartition,
    RebalanceLeaders, ReplicasChanged, UncleanLeaderElected)


def busy_cluster() -> ClusterState:
    state = new_cluster([1, 2, 3, 4])
    add_topic(state, "a", [[1, 2, 3], [2, 3, 4]], max_lag=5, min_lrs=2, lag_time_max_ms=30)
    add_topic(state, "b", [[4]])
    produce(state, ProduceRequest("a", 0, Acks.ALL, 3))
    replication_step(state, now_ms=5)
    produce(state, ProduceRequest("a", 0, Acks.ALL, 2))
    handle(state, SpuOffline(2))
    return state


def test_cluster_state_round_trips_through_json():
    state = busy_cluster()
    data = cluster_to_dict(state)
    again = cluster_from_dict(json.loads(json.dumps(data)))
    assert again == state
    assert cluster_to_dict(again) == data
    assert [rs.key for rs in again.sets_of(3)] == [("a", 0), ("a", 1)]


def test_a_restored_cluster_behaves_like_the_original():
    state = busy_cluster()
    again = cluster_from_dict(json.loads(json.dumps(cluster_to_dict(state))))
    for s in (state, again):
        handle(s, SpuOnline(2))
        replication_step(s)
    assert again == state


def test_a_replica_set_round_trips_on_its_own():
    rs = busy_cluster().replica_set("a", 0)
    assert replica_set_from_dict(json.loads(json.dumps(replica_set_to_dict(rs)))) == rs


def test_an_unknown_format_version_is_refused():
    data = cluster_to_dict(busy_cluster())
    data["version"] = 99
    with pytest.raises(ValueError, match="version"):
        cluster_from_dict(data)


MESSAGES = [
    ProduceRequest("t", 0, Acks.ALL, 2), FollowerFetch("t", 0, 1, 5, 100),
    ReplicationTick(7, None), SpuOffline(1), SpuOnline(1), PromotionSucceeded("t", 0, 2, 3),
    PromotionFailed("t", 0, 2, 3), TimerFired("t", 0, 2, 3), ReconcileElections(),
    ProduceAccepted("t", 0, Acks.NONE, 4, (9, 10)), ProduceRefused("t", 0, "X", "why"),
    RecordsAcknowledged("t", 0, Acks.LEADER, ((0, 9), (1, 10))),
    AckFailed("t", 0, "X", "why", ((0, 9),)),
    ResolutionChanged("t", 0, Resolution.ONLINE, Resolution.ELECTION, "r"),
    LeaderChanged("t", 0, 1, None, 2), LrsChanged("t", 0, 1, (1, 2), 5),
    NotifyCandidate("t", 0, 2, 1, (2, 3)), StartElectionTimer("t", 0, 2, 1, 3000),
    ReplicaTruncated("t", 0, 1, 4, 2, "r"),
    ReassignPartition("t", 0, (3, 4), True, None, 5), CancelReassignment("t", 0),
    ElectPreferredLeaders(), ElectPreferredLeaders("t"), RebalanceLeaders(0.2),
    ElectUncleanLeader("t", 0, 3), ElectUncleanLeader("t", 0),
    MoveStarted("t", 0, (1, 2), (2, 3)), ReplicasChanged("t", 0, (1, 2, 3), (3,), (1,)),
    MoveProgressed("t", 0, MovePhase.STALLED, (3,), 4, 8),
    MoveCompleted("t", 0, (2, 3), 2), MoveRolledBack("t", 0, (1, 2), "cancelled"),
    UncleanLeaderElected("t", 0, 2, 5, 3, 2, True),
]


@pytest.mark.parametrize("msg", MESSAGES, ids=lambda m: type(m).__name__)
def test_every_event_and_action_round_trips_through_json(msg):
    data = json.loads(json.dumps(message_to_dict(msg)))
    assert data["type"] == type(msg).__name__
    assert message_from_dict(data) == msg


def test_acks_all_serialises_as_the_word_all():
    assert message_to_dict(ProduceRequest("t", 0, Acks.ALL))["acks"] == "all"


def test_partition_summary_has_the_fluvio_partition_list_fields():
    state = busy_cluster()
    summary = partition_summary(state.replica_set("a", 0))
    assert summary == {
        "topic": "a", "partition": 0, "leader": 1, "replicas": [1, 2, 3], "lrs": [1, 3],
        "resolution": "Online", "hw": 3, "leo": 5,
        "replica_status": [{"spu": 1, "leo": 5, "hw": 3}, {"spu": 2, "leo": 3, "hw": 3},
                           {"spu": 3, "leo": 3, "hw": 3}]}
    json.dumps(summary)


def test_partition_list_is_sorted_and_filters_by_topic():
    state = busy_cluster()
    assert [(s["topic"], s["partition"]) for s in partition_list(state)] == [
        ("a", 0), ("a", 1), ("b", 0)]
    assert [s["partition"] for s in partition_list(state, "a")] == [0, 1]
    [b] = partition_list(state, "b")
    assert (b["leader"], b["lrs"], b["leo"]) == (4, [4], 0)


def test_a_partition_without_a_leader_shows_no_leo():
    state = busy_cluster()
    handle(state, SpuOffline(4))
    [b] = partition_list(state, "b")
    assert (b["leader"], b["leo"], b["resolution"]) == (None, None, "Offline")


def test_handle_rejects_something_that_is_not_an_event():
    with pytest.raises(TypeError, match="not a replication event"):
        handle(new_cluster([1]), object())


def test_events_are_immutable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SpuOffline(1).spu = 2


def _moving_cluster() -> ClusterState:
    state = busy_cluster()
    add_topic(state, "c", [[1, 2]], unclean_leader_election=True)
    handle(state, ReassignPartition("b", 0, (3, 4), timeout_ms=50, now_ms=3))
    handle(state, ReplicationTick(now_ms=9))
    return state


def test_a_move_in_flight_and_the_unclean_setting_round_trip_through_json():
    state = _moving_cluster()
    again = cluster_from_dict(json.loads(json.dumps(cluster_to_dict(state))))
    # The steady sets' followers as the index keeps them: written into the sets to compare.
    state.steady.leave_all(state.replica_sets)
    assert again == state and again.replica_set("b", 0).move is not None
    assert again.topics["c"].unclean_leader_election is True
    assert [rs.key for rs in again.sets_of(3)] == [("a", 0), ("a", 1), ("b", 0)]


def test_a_restored_cluster_finishes_a_move_like_the_original():
    state = _moving_cluster()
    again = cluster_from_dict(json.loads(json.dumps(cluster_to_dict(state))))
    for s in (state, again):
        handle(s, ReplicationTick(now_ms=20))
        handle(s, ReplicationTick(now_ms=30))
    # As stored: a set in the steady index (SPU 2 offline, out of the LRS) keeps its
    # followers' clocks in the index, not in its replicas (core.replication.steady).
    assert cluster_to_dict(again) == cluster_to_dict(state)
    assert again.replica_set("b", 0).replicas == [3, 4]


def test_a_replica_set_stored_before_moves_existed_loads_without_one():
    data = replica_set_to_dict(busy_cluster().replica_set("a", 0))
    del data["move"]
    assert replica_set_from_dict(data).move is None
