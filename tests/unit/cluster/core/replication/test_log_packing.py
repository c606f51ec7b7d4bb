"""A new topic's statuses as the metadata log stores them: packed, and read back whole."""
from __future__ import annotations

import json
import random

from cluster.core.replication import SpuOffline, add_topic, handle, new_cluster
from cluster.core.replication import metadata
from cluster.core.replication.log_packing import packed, unpacked


def stored(entry: dict) -> str:
    return json.dumps(packed(entry), separators=(",", ":"))


def test_a_new_topics_statuses_are_logged_packed_and_read_back_as_made():
    state = new_cluster([1, 2, 3, 4])
    handle(state, SpuOffline(4))
    add_topic(state, "t", [[1, 2, 3], [4, 1, 2], [2, 3, 1]] * 100)
    entry = metadata.topic_entry("t", state.replica_sets.values())
    # Some sets are not the usual first status (SPU 4 down: an election, an LRS without
    # it): they come back whole, the others from their replicas alone.
    assert {json.dumps(row[1:]) for row in entry["statuses"]} == {
        json.dumps(row) for row in ([1, [1, 2, 3], "Online", 1],
                                    [None, [1, 2], "CandidateFound", 0],
                                    [2, [2, 3, 1], "Online", 1])}
    text = stored(entry)
    assert json.loads(text)["statuses"] == [] and entry["statuses"], "the entry is not changed"
    assert unpacked(json.loads(text)) == entry


def test_a_new_topic_of_many_partitions_is_a_small_fraction_of_its_statuses():
    spus = list(range(50))
    state = new_cluster(spus)
    rng = random.Random(7)
    add_topic(state, "round", [[p % 50, (p + 1) % 50, (p + 2) % 50] for p in range(20000)])
    add_topic(state, "random", [rng.sample(spus, 3) for _ in range(20000)])
    for name, most in (("round", 1 / 50), ("random", 1 / 5)):
        entry = metadata.topic_entry(name, [state.replica_sets[(name, p)] for p in range(20000)])
        whole = len(json.dumps(entry, separators=(",", ":")))
        assert len(stored(entry)) < whole * most
        assert unpacked(json.loads(stored(entry))) == entry


def test_only_a_new_topics_statuses_are_packed():
    partition = {"type": "partition", "topic": "t", "partition": 0, "replicas": [1]}
    assert packed(partition) is partition and unpacked(dict(partition)) == partition
    empty = {"type": "topic-replicated", "topic": "t", "statuses": []}
    assert packed(empty) is empty
    older = {"type": "topic-replicated", "topic": "t", "statuses": [[[1], 1, [1], "Online", 1]]}
    assert unpacked(json.loads(json.dumps(older))) == older, "an entry stored whole reads so"
