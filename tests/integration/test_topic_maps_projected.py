"""A topic's replica map as the store projection writes it (projections/store.py,
``_write_maps``): the partitions whose replicas changed, element by element in the
database, the others as they were, an index past the map's end left alone; the same on
PostgreSQL (jsonb_set) as on SQLite (json_replace)."""
from __future__ import annotations

import pytest
from django.db import transaction

from cluster.adapters.metadata_log import Entry
from cluster.models import Topic
from cluster.projections.store import MAP_BATCH, apply_entries
from tests.helpers import passed_on_postgresql
PARTITIONS = 300


def _moved(topic: Topic, offset: int, index: int, replicas: list[int]) -> Entry:
    return Entry(offset, {"type": "partition", "topic": topic.name, "topic_pk": topic.pk,
                          "partition": index, "leader": replicas[0], "lrs": replicas,
                          "replicas": replicas, "resolution": "online", "epoch": 2,
                          "reason": "",
                          "changed": {"replicas": {"from": [0, 1, 2], "to": replicas}}})


@pytest.mark.django_db(transaction=True)
def test_a_topics_map_takes_the_moved_partitions_replicas_and_keeps_the_rest():
    start = [[i % 5, (i + 1) % 5, (i + 2) % 5] for i in range(PARTITIONS)]
    topic = Topic.objects.create(name="orders", partitions=PARTITIONS, replication_factor=3,
                                 replica_map=start)
    other = Topic.objects.create(name="other", partitions=2, replication_factor=3,
                                 replica_map=[[0, 1, 2], [1, 2, 3]])
    # More moves than one statement writes, one of them moved twice in the batch (the
    # later wins), and one past the map's end (a map the log outgrew: left as it is).
    moved = {i: [7, 8, i % 5] for i in range(0, PARTITIONS, 3)}
    assert len(moved) > MAP_BATCH
    entries = [_moved(topic, 500 + n, i, r) for n, (i, r) in enumerate(moved.items())]
    entries += [_moved(topic, 900, 4, [9, 8, 7]), _moved(topic, 901, PARTITIONS + 5, [1, 2, 3])]
    with transaction.atomic():
        apply_entries(entries)
    expected = [moved.get(i, r) for i, r in enumerate(start)]
    expected[4] = [9, 8, 7]
    topic.refresh_from_db()
    assert topic.replica_map == expected
    other.refresh_from_db()
    assert other.replica_map == [[0, 1, 2], [1, 2, 3]]
    # Applied again (a replay), nothing changes.
    with transaction.atomic():
        apply_entries(entries)
    topic.refresh_from_db()
    assert topic.replica_map == expected


def test_a_topics_map_is_written_the_same_on_postgresql():
    """The same test in a fresh PostgreSQL database of its own (the suite runs on SQLite)."""
    passed_on_postgresql(__file__, "keeps_the_rest", "maps", 1)
