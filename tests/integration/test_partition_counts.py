"""The partition counts pages read (TopicSpuCount, FailoverCount) are a projection of the
partition rows: after any sequence of creates, status changes and deletes they equal a
count from scratch, and the pages show them."""
from __future__ import annotations

import random

import pytest

from cluster.adapters.metadata_log import Entry
from cluster.core.replication import Resolution, metadata
from cluster.models import Partition, Topic
from cluster.projections import aggregates
from cluster.projections.store import apply_entries
from cluster.selectors.stats import cluster_stats
from cluster.services import topic_create, topic_delete
from tests.helpers import register_spus

pytestmark = pytest.mark.django_db

SPUS = list(range(7))


def _random_status(rng: random.Random, replicas: list[int]) -> metadata.Status:
    """Any status the store may be given: a moved replica set, any leader or none, any LRS."""
    if rng.random() < 0.2:
        replicas = rng.sample(SPUS, len(replicas))
    lrs = [s for s in replicas if rng.random() < 0.7]
    leader = rng.choice(lrs) if lrs and rng.random() < 0.8 else None
    resolution = Resolution.ONLINE if leader is not None else Resolution.OFFLINE
    return metadata.Status(tuple(replicas), leader, tuple(lrs), resolution, rng.randrange(9))


def _entries(rng: random.Random, offset: int) -> list[Entry]:
    """A batch of partition entries, and now and then a topic's every status at once."""
    rows = list(Partition.objects.values_list("topic_id", "topic__name", "index", "replicas",
                                              "leader", "lrs", "resolution", "epoch"))
    entries: list[Entry] = []
    for pk, name, index, *row in rng.sample(rows, min(len(rows), rng.randrange(1, 12))):
        old = metadata.Status(tuple(row[0]), row[1], tuple(row[2]), Resolution(row[3]), row[4])
        data = metadata.partition_entry((name, index), old, _random_status(rng, row[0]), "t")
        entries.append(Entry(offset + len(entries), {**data, "topic_pk": pk}))
    if rng.random() < 0.3:
        topic = rng.choice(list(Topic.objects.filter(partitions__gt=0)))
        statuses = [list(_random_status(rng, r)) for r in topic.replica_map]
        entries.append(Entry(offset + len(entries), {
            "type": "topic-replicated", "topic": topic.name, "topic_pk": topic.pk,
            "statuses": [[list(s[0]), s[1], list(s[2]), s[3].value, s[4]] for s in statuses]}))
    return entries


@pytest.mark.parametrize("share", [0.25, 0.0, 1.0],
                         ids=["default", "whole-topic-reads", "in-list-reads"])
def test_counts_equal_a_count_from_scratch_after_random_changes(operator_client, monkeypatch,
                                                                share):
    # The rows a change overwrites, read by IN lists or a topic's whole (several topics a
    # query), count the same.
    monkeypatch.setattr(aggregates, "WHOLE_TOPIC_SHARE", share)
    register_spus(*SPUS, online=True)
    rng, offset, made = random.Random(22), 1, 0
    for step in range(40):
        roll = rng.random()
        if roll < 0.15 or made < 3:
            topic_create(name=f"t{made}", partitions=rng.randrange(1, 40),
                         replication=rng.randrange(1, 4), by="test")
            made += 1
        elif roll < 0.22 and Topic.objects.count() > 2:
            topic_delete(name=rng.choice(list(Topic.objects.values_list("name", flat=True))))
        else:
            entries = _entries(rng, offset)
            offset += len(entries)
            apply_entries(entries)
        counted = aggregates.counted()
        aggregates.rebuild()
        assert counted == aggregates.counted(), f"counts drifted at step {step}"
    # The pages read the counts: the totals a page shows are the rows' own.
    stats = cluster_stats(with_failover=True)
    rows = list(Partition.objects.values_list("leader", "replicas", "lrs"))
    assert stats.partitions == len(rows)
    assert stats.leaderless == sum(leader is None for leader, _, _ in rows)
    assert stats.under_replicated == sum(len(lrs) < len(r) for _, r, lrs in rows)
    assert sum(s.leaders for s in stats.spus.values()) == len(rows) - stats.leaderless
    assert "partition" in operator_client.get("/").content.decode()


def test_the_store_command_rebuilds_counts_of_rows_written_behind_the_projection():
    from django.core.management import call_command

    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=4, replication=3, by="test")
    Partition.objects.filter(index=0).update(leader=None)  # behind the projection's back
    assert cluster_stats().leaderless == 0
    call_command("store", "recount")
    assert cluster_stats().leaderless == 1


def test_partition_pages_walk_the_topics_in_name_order_by_their_counts(operator_client):
    register_spus(0, 1, 2, online=True)
    for name, partitions in (("b", 5), ("a", 3), ("c", 4)):
        topic_create(name=name, partitions=partitions, replication=2, by="test")
    expected = [f"{t}/{i}" for t, i in Partition.objects.order_by("topic__name", "index")
                .values_list("topic__name", "index")]
    got = []
    for offset in range(0, 12, 5):
        body = operator_client.get(f"/api/partitions/?offset={offset}&limit=5").json()
        assert body["count"] == 12
        got += [f'{r["topic"]}/{r["partition"]}' for r in body["results"]]
    assert got == expected
    body = operator_client.get("/api/partitions/?topic=b&offset=3&limit=5").json()
    assert (body["count"], [r["partition"] for r in body["results"]]) == (5, [3, 4])
