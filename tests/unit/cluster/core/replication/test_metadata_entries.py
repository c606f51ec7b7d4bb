"""Metadata-log entries (issue 18): whole statuses, so replay is a fold."""
from __future__ import annotations

from cluster.core.replication import (Acks, ElectUncleanLeader, ProduceRequest, Resolution,
                                      SpuOffline, SpuOnline, add_topic, handle, new_cluster,
                                      produce, replication_step, run_elections)
from cluster.core.replication import metadata


def test_a_partition_entry_names_what_moved_and_carries_the_whole_status():
    old = metadata.Status((1, 2, 3), 1, (1, 2, 3), Resolution.ONLINE, 1)
    new = metadata.Status((1, 2, 3), 2, (2, 3), Resolution.ONLINE, 2)
    entry = metadata.partition_entry(("t", 0), old, new, "leader SPU 1 went offline")
    assert entry["changed"] == {"leader": {"from": 1, "to": 2},
                                "lrs": {"from": [1, 2, 3], "to": [2, 3]},
                                "epoch": {"from": 1, "to": 2}}
    assert (entry["leader"], entry["lrs"], entry["epoch"]) == (2, [2, 3], 2)


def test_folding_entries_in_order_gives_the_latest_status_and_forgets_dropped_topics():
    state = new_cluster([1, 2, 3])
    add_topic(state, "t", [[1, 2, 3], [2, 3, 1]])
    statuses: dict = {}
    metadata.fold(statuses, metadata.topic_entry("t", state.replica_sets.values()))
    assert statuses[("t", 1)].leader == 2
    after = metadata.Status((2, 3, 1), 3, (3, 1), Resolution.ONLINE, 2)
    metadata.fold(statuses, metadata.partition_entry(("t", 1), statuses[("t", 1)], after, ""))
    assert statuses[("t", 1)] == after
    metadata.fold(statuses, {"type": "topic-dropped", "topic": "t"})
    assert statuses == {}


def test_an_unclean_election_entry_gives_the_range_of_offsets_given_up():
    state = new_cluster([1, 2, 3], election_timeout_ms=500)
    add_topic(state, "t", [[1, 2, 3]])
    produce(state, ProduceRequest("t", 0, Acks.ALL, 5))
    replication_step(state)
    handle(state, SpuOffline(2))
    handle(state, SpuOffline(3))
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 4))
    replication_step(state)
    handle(state, SpuOffline(1))
    handle(state, SpuOnline(2))
    actions = handle(state, ElectUncleanLeader("t", 0, 2))
    (entry,) = [e for e in metadata.action_entries(state, actions)
                if e["type"] == "unclean-election"]
    assert entry["given_up"] == [5, 9] and entry["offsets_lost"] == 4


def test_an_election_entry_carries_the_candidate_and_its_deadline():
    state = new_cluster([1, 2, 3], election_timeout_ms=500)
    add_topic(state, "t", [[1, 2, 3]])
    state.clock_ms = 7
    actions = handle(state, SpuOffline(1))
    (entry,) = [e for e in metadata.action_entries(state, actions) if e["type"] == "election"]
    assert (entry["candidate"], entry["attempt"], entry["deadline_ms"]) == (2, 1, 507)
    run_elections(state, now_ms=8)
