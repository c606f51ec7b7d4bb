"""A new topic's partition rows, written in bulk (COPY or executemany), read back as the
rows the ORM would have stored: replicas, leader or none, LRS, status, zeroed offsets."""
from __future__ import annotations

import pytest

from cluster.projections.bulk_partitions import insert_partitions
from cluster.core.partitions import initial_partition_status
from cluster.models import Partition, Topic
from cluster.projections import aggregates
from cluster.services import topic_create
from tests.helpers import register_spus

pytestmark = pytest.mark.django_db

FIELDS = ("index", "replicas", "initial_leader", "leader", "lrs", "resolution", "hw", "leo",
          "replica_status", "epoch", "written_by")


def _rows(name: str) -> list[tuple]:
    return list(Partition.objects.filter(topic__name=name).order_by("index")
                .values_list(*FIELDS))


def test_a_topic_on_online_spus_stores_each_partition_online_led_by_its_first_replica():
    register_spus(0, 1, 2, 3, online=True)
    outcome = topic_create(name="t", partitions=9, replication=3, by="test")
    assert _rows("t") == [(i, reps, reps[0], reps[0], reps, "Online", 0, 0, [], 0, 0)
                          for i, reps in enumerate(outcome.replica_map)]
    assert Topic.objects.get(name="t").replica_map == outcome.replica_map


def test_partitions_on_offline_spus_store_no_leader_or_a_live_one_and_a_short_lrs():
    register_spus(0, 1, online=True)
    register_spus(2, 3)
    outcome = topic_create(name="t", partitions=8, replication=2, by="test")
    expected = []
    for i, reps in enumerate(outcome.replica_map):
        status = initial_partition_status(reps, {0, 1})
        expected.append((i, reps, reps[0], status.leader, status.lrs, status.resolution,
                         0, 0, [], 0, 0))
    assert _rows("t") == expected
    assert {row[3] for row in expected} >= {None}  # some partition has every replica offline
    assert aggregates.counted() == _recounted()


def test_replicas_given_as_tuples_are_stored_as_json_lists():
    topic = Topic.objects.create(name="t", partitions=2, replication_factor=2)
    insert_partitions(topic.pk, [(4, 5), (5, 4)], [4, None], [(4, 5), ()],
                      ["Online", "Offline"])
    assert _rows("t") == [(0, [4, 5], 4, 4, [4, 5], "Online", 0, 0, [], 0, 0),
                          (1, [5, 4], 5, None, [], "Offline", 0, 0, [], 0, 0)]


def _recounted():
    aggregates.rebuild()
    return aggregates.counted()
