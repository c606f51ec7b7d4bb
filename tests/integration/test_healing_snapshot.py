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


def partition_queries(queries) -> list[str]:
    return [q["sql"] for q in queries if 'FROM "cluster_partition"' in q["sql"]]


def read_then_spu_0_down(*, spus: int, partitions: int) -> tuple:
    """The snapshot read and the offset it was read at; then SPU 0 went down, and a tick."""
    from cluster.ports import applied_offset

    register_spus(*range(spus), online=True)
    topic_create(name="orders", partitions=partitions, replication=3)
    tick(1_000)
    first, since = cluster_snapshot(), applied_offset()
    spu_offline(spu_id=0, by="test")
    tick(2_000)
    return first, since


def by_key(snapshot) -> dict:
    return {(p.topic, p.partition): p for p in snapshot.partitions}


def test_a_leader_move_reads_again_only_the_rows_the_log_names(redis_url, monkeypatch):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from cluster.ports import read_log
    from healing import snapshot

    monkeypatch.setattr(snapshot, "PATCH_MAX_SHARE", 1.0)  # however many SPU 0 holds
    first, since = read_then_spu_0_down(spus=4, partitions=12)
    named = {e.data["partition"] for e in read_log(since + 1)
             if e.data["type"] == "partition"}
    assert 0 < len(named) < 12
    with CaptureQueriesContext(connection) as queries:
        patched = cluster_snapshot()
    reads = partition_queries(queries.captured_queries)
    assert len(reads) == 1 and '"cluster_partition"."id" IN' in reads[0], reads
    snapshot._read.clear()  # what a fresh process reads: every row
    assert by_key(patched) == by_key(cluster_snapshot())
    assert patched.partitions is not first.partitions
    assert {p.partition for p, q in zip(patched.partitions, first.partitions) if p != q} \
        <= named


def test_hw_checkpoints_in_the_log_keep_the_same_rows(redis_url, settings):
    from cluster.ports import applied_offset, read_log
    from cluster.services.records import records_produce

    settings.HISTORY_HW_INTERVAL_S = 0  # a checkpoint at every unit that moves an offset
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=3, replication=3)
    tick(1_000)
    first = cluster_snapshot()
    since = applied_offset()
    records_produce(topic="orders", partition=1, count=5)
    tick(2_000)
    tick(3_000)
    kinds = {e.data["type"] for e in read_log(since + 1)}
    assert applied_offset() > since and kinds == {"hw"}, kinds
    assert cluster_snapshot().partitions is first.partitions


def test_a_log_trimmed_past_the_rows_read_reads_every_row(redis_url, monkeypatch):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from cluster.adapters import metadata_log
    from cluster.ports import applied_offset, partition_rows_moved

    first, since = read_then_spu_0_down(spus=3, partitions=6)
    assert partition_rows_moved(since + 1, applied_offset())  # held: named
    monkeypatch.setattr(metadata_log, "start", lambda *a, **k: since + 2)  # one trimmed
    assert partition_rows_moved(since + 1, applied_offset()) is None
    with CaptureQueriesContext(connection) as queries:
        again = cluster_snapshot()
    reads = partition_queries(queries.captured_queries)
    assert len(reads) == 1 and '"cluster_partition"."topic_id" IN' in reads[0], reads
    assert by_key(again) != by_key(first)
    assert all(p.leader != 0 for p in again.partitions)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_rows_kept_and_patched_are_the_rows_read_afresh_through_faults(
        redis_url, monkeypatch, seed):
    """Outages, recoveries, preferred elections, replicas moved, topics made and dropped, in
    a random order: after each step the snapshot patched from the log is what a fresh read
    gives, and what the check derives from it (the LRS members, the detectors' counts),
    brought up to date from the views the patches replaced, is what it derives afresh."""
    import random

    from cluster.services.leaders import leader_elect_preferred
    from cluster.services.outages import spu_online
    from healing import core, members, snapshot

    monkeypatch.setattr(snapshot, "PATCH_MAX_SHARE", 1.0)
    patches: list[int] = []
    patch = snapshot._patch
    monkeypatch.setattr(snapshot, "_patch", lambda kept, moved, topics: patches.append(
        len(moved)) or patch(kept, moved, topics))
    rng = random.Random(seed)
    register_spus(0, 1, 2, 3, 4, online=True)
    topic_create(name="orders", partitions=10, replication=3)
    names = ["orders"]
    now = 1_000
    tick(now)
    cluster_snapshot()
    updated = {"in_lrs": 0, "tally": 0}
    seen = [frozenset()]
    real_moved = members._moved

    def members_moved(value, views):
        updated["in_lrs"] += 1
        return real_moved(value, views)

    monkeypatch.setattr(members, "_moved", members_moved)

    def derivations(snap):
        def counted(name, update):
            def moved(value, views):
                updated[name] += 1
                return update(value, views)
            return moved
        now, change = members.members_now(snap, seen[0])
        # What left and joined since the last derivation, found from the rows that moved.
        assert change == (seen[0] - now, now - seen[0])
        seen[0] = now
        return (now, snapshot.derived(snap, "tally", snap.spus,
                                      lambda: core.tally(snap.partitions, snap.spus),
                                      counted("tally", lambda t, views: core.tally_moved(
                                          t, snap.spus, views))))

    derivations(cluster_snapshot())
    for step in range(24):
        move = rng.choice(["offline", "offline", "online", "online", "preferred", "topic",
                           "drop", "move", "move"])
        if move == "move":
            moving_one_replica(rng, now)
        elif move == "offline":
            spu_offline(spu_id=rng.randrange(5), by="test")
        elif move == "online":
            spu_online(spu_id=rng.randrange(5), by="test")
        elif move == "preferred":
            leader_elect_preferred(by="test")
        elif move == "topic":
            names.append(f"t{step}")
            topic_create(name=names[-1], partitions=rng.randint(1, 6), replication=2)
        elif len(names) > 1:
            topic_delete(name=names.pop(rng.randrange(len(names))))
        now += 1_000
        tick(now)
        patched = cluster_snapshot()
        kept, derived = by_key(patched), derivations(patched)
        held = dict(snapshot._read)
        snapshot._read.clear()
        fresh = cluster_snapshot()
        assert kept == by_key(fresh), (seed, step, move)
        assert derived == (core.in_lrs(fresh), core.tally(fresh.partitions, fresh.spus)), \
            (seed, step, move)
        snapshot._read.clear()
        snapshot._read.update(held)  # patched on, not from the fresh read
    assert len(patches) >= 3, patches
    assert updated["in_lrs"] >= 3 and updated["tally"] >= 3, updated


def moving_one_replica(rng, now: int) -> None:
    """A move of one partition's replica to an SPU it lacks (as a plan's step starts one)."""
    from cluster.adapters import hot_state
    from cluster.core import replication as replication_core
    from cluster.engine.engine import current

    state = hot_state.load().state
    key = rng.choice(sorted(k for k, rs in state.replica_sets.items() if rs.move is None))
    with current().unit(keys=[key], dispatch=LocalQueue()) as u:
        rs = u.state.state.replica_sets[key]
        spare = rng.choice([s for s in u.state.state.spus if s not in rs.replicas])
        target = list(rs.replicas)
        target[rng.randrange(len(target))] = spare
        u.actions += replication_core.handle(u.state.state, replication_core.ReassignPartition(
            key[0], key[1], target, elect_preferred=True, timeout_ms=10_000, now_ms=now))


def test_the_rows_read_as_text_are_the_replicas_and_lrs_the_orm_decodes(redis_url):
    """The JSON columns are read as their text and each distinct text decoded once
    (selectors.sql.tuple_parser): what the snapshot holds is what the ORM's decode gives,
    an SPU down (LRS shorter than the replicas) included."""
    from cluster.models import Partition

    first, _ = read_then_spu_0_down(spus=4, partitions=12)
    rows = {(p.topic.name, p.index): (tuple(p.replicas), tuple(p.lrs or ()), p.leader)
            for p in Partition.objects.select_related("topic")}
    snapshot = cluster_snapshot()
    assert {(p.topic, p.partition): (p.replicas, p.lrs, p.leader)
            for p in snapshot.partitions} == rows
    assert any(len(lrs) < len(replicas) for replicas, lrs, _ in rows.values())
    assert all(type(p.replicas) is tuple and type(p.lrs) is tuple for p in snapshot.partitions)
