"""The detector's snapshot reads the partitions again only when they may have moved: a
status change through the metadata log, or a topic created or deleted."""
from __future__ import annotations

import pytest

from cluster.services import topic_create, topic_delete
from cluster.services.outages import spu_offline
from cluster.services.replication import replication_tick
from cluster.services.waiting import LocalQueue
from healing.snapshot import cluster_snapshot
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def tick(now: int) -> None:
    queue = LocalQueue()
    replication_tick(now=now, dispatch=queue)
    queue.drain()


def leaders(snapshot) -> dict:
    return {(p.topic, p.partition): p.leader for p in snapshot.partitions}


def test_nothing_moved_means_the_same_rows_and_a_leader_move_is_read_again(redis_url):
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=6, replication=3)
    tick(1_000)
    first = cluster_snapshot()
    assert cluster_snapshot().partitions is first.partitions  # not read again
    led = [k for k, leader in leaders(first).items() if leader == 0]
    assert led
    spu_offline(spu_id=0, by="test")
    tick(2_000)
    moved = leaders(cluster_snapshot())
    assert all(moved[k] not in (0, None) for k in led)


def test_a_topic_created_or_deleted_is_in_the_next_snapshot(redis_url):
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=2, replication=2)
    tick(1_000)
    assert len(cluster_snapshot().partitions) == 2
    topic_create(name="more", partitions=3, replication=2)
    assert len(cluster_snapshot().partitions) == 5
    topic_delete(name="orders")
    assert {p.topic for p in cluster_snapshot().partitions} == {"more"}


def test_a_run_over_the_same_rows_reuses_its_detection_and_a_move_detects_again(
        redis_url, monkeypatch):
    from healing import services

    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=6, replication=3)
    tick(1_000)
    calls: list[int] = []
    detect = services.core.detect
    monkeypatch.setattr(services.core, "detect",
                        lambda *args, **kwargs: calls.append(1) or detect(*args, **kwargs))
    assert services.healing_check(now_ms=2_000)["anomalies"] == 0
    assert services.healing_check(now_ms=3_000)["anomalies"] == 0
    assert len(calls) == 1  # the same rows: the same findings, not read again
    spu_offline(spu_id=0, by="test")
    tick(4_000)
    assert services.healing_check(now_ms=5_000)["anomalies"] == 1  # SPU 0 down, holding some
    assert len(calls) == 2
