"""The detector's memory of LRS members: read only when another run changed it, written
only when the members changed, as what changed since its base until that passes a share of
them, and a shrink still found from it (healing/members.py)."""
from __future__ import annotations

import random

import msgpack
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cluster.models import Event, Partition
from cluster.services import topic_create
from cluster.services.replication import replication_tick
from cluster.services.waiting import LocalQueue
from healing import members, snapshot
from healing.core import overlaid
from healing.models import HealingConfig, LrsMembers
from healing.services import healing_check
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture
def cluster(redis_url):
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=4, replication=3)
    queue = LocalQueue()
    replication_tick(now=1_000, dispatch=queue)
    queue.drain()
    healing_check(now_ms=2_000)


def row() -> HealingConfig:
    return HealingConfig.objects.get(pk=HealingConfig.SINGLETON)


def held() -> LrsMembers:
    return LrsMembers.objects.get(pk=LrsMembers.SINGLETON)


def mentions_members(queries) -> list[str]:
    return [q["sql"] for q in queries if LrsMembers._meta.db_table in q["sql"]]


def stored(config: HealingConfig) -> frozenset:
    """The members their row holds (its packed base and the changes since), of the version
    the config row names."""
    row = held()
    assert row.version == config.in_lrs_version
    added, removed = members.changes_unpacked(bytes(row.changes))
    return (members.unpacked(bytes(row.packed)) - removed) | added


def behind_the_projections_back(**changes) -> None:
    """Rows written as no projection would, so the snapshot must read them again."""
    Partition.objects.filter(index=0).update(**changes)
    snapshot._read.clear()


def test_a_run_where_nothing_moved_neither_reads_nor_writes_the_members(cluster):
    first = row()
    assert len(stored(first)) == 12 and first.in_lrs_version != 0
    with CaptureQueriesContext(connection) as queries:
        healing_check(now_ms=3_000)
    assert mentions_members(queries) == []
    assert row().in_lrs_version == first.in_lrs_version


def test_a_replica_leaving_an_lrs_is_a_shrink_and_the_new_members_are_written(cluster):
    version = row().in_lrs_version
    lrs = Partition.objects.get(index=0).lrs
    behind_the_projections_back(lrs=[s for s in lrs if s != 2])
    healing_check(now_ms=3_000)
    after = row()
    assert after.shrinks == {"2": [3_000]}
    assert after.in_lrs_version != version and len(stored(after)) == 11
    assert ("orders", 0, 2) not in stored(after)


def test_a_run_that_changed_some_members_writes_those_changes_not_the_base(cluster):
    base = bytes(held().packed)
    lrs = Partition.objects.get(index=0).lrs
    behind_the_projections_back(lrs=[s for s in lrs if s != 2])
    with CaptureQueriesContext(connection) as queries:
        healing_check(now_ms=3_000)
    written = [sql for sql in mentions_members(queries) if sql.startswith("UPDATE")]
    assert written and all('"packed"' not in sql for sql in written)
    after = row()
    assert bytes(held().packed) == base
    assert members.changes_unpacked(bytes(held().changes)) == (
        frozenset(), frozenset({("orders", 0, 2)}))
    # Another process (nothing kept) reads the base and the changes: the same members.
    members._kept.clear()
    assert members.last_seen(row()) == stored(after) and len(stored(after)) == 11
    # Back in the LRS: the pair is in the base again, and nothing is left changed.
    behind_the_projections_back(lrs=lrs)
    healing_check(now_ms=4_000)
    assert bytes(held().changes) == msgpack.packb([[], []])
    assert stored(row()) == members.unpacked(base)


def test_once_the_changes_pass_their_share_of_the_members_the_base_is_written_again(
        cluster, monkeypatch):
    monkeypatch.setattr(overlaid, "REBASE_AT_LEAST", 0)
    monkeypatch.setattr(overlaid, "REBASE_SHARE", 100)  # 12 members: any change passes
    lrs = Partition.objects.get(index=0).lrs
    behind_the_projections_back(lrs=[s for s in lrs if s != 2])
    healing_check(now_ms=3_000)
    after = row()
    assert bytes(held().changes) == b""
    assert members.unpacked(bytes(held().packed)) == stored(after)
    assert len(stored(after)) == 11


def test_the_changes_since_the_base_follow_any_members_through_a_process_s_runs():
    """Random members run after run: what the row would hold (the base, less the pairs
    removed, with the pairs added) is each run's members, the added pairs are never in the
    base and the removed ones always are."""
    rng = random.Random(7)
    universe = [("t", p, s) for p in range(40) for s in range(4)]
    for _ in range(30):
        base = frozenset(rng.sample(universe, 60))
        kept = members.Kept(1, base, frozenset(), frozenset())
        for _ in range(12):
            seen = kept.members
            now = frozenset(rng.sample(universe, rng.randint(40, 80)))
            added, removed = overlaid.apart(kept.added, kept.removed, seen - now, now - seen)
            assert (base - removed) | added == now
            assert added.isdisjoint(base) and removed <= base
            kept = members.Kept(kept.version + 1, now, added, removed)


def test_members_another_process_wrote_are_read_not_taken_from_this_ones_memory(cluster):
    # Another worker's run saw SPU 2 leave partition 0's LRS and come back: its members
    # lack the pair, so to this run SPU 2 rejoined, which is no shrink; had this process
    # used its own memory (the pair present), nothing would differ either. So make the
    # other run's memory hold a pair this one never saw, and remove it from the LRS.
    lrs = Partition.objects.get(index=0).lrs
    behind_the_projections_back(lrs=[s for s in lrs if s != 2])
    healing_check(now_ms=3_000)  # this process now remembers the shorter LRS
    other = stored(row()) | {("orders", 0, 2)}
    HealingConfig.objects.filter(pk=HealingConfig.SINGLETON).update(in_lrs_version=7)
    LrsMembers.objects.filter(pk=LrsMembers.SINGLETON).update(
        version=7, packed=members.packed(other), changes=b"")
    healing_check(now_ms=4_000)
    assert row().shrinks == {"2": [3_000, 4_000]}  # found from the members in the row
    assert members.last_seen(row()) == stored(row()) == other - {("orders", 0, 2)}


@pytest.mark.django_db(transaction=True)
def test_members_in_the_config_row_move_to_their_own_row_packed_with_their_version():
    """Migration 0005: the members an older version kept in the config row (packed, or as
    JSON arrays before round 29) are read from their own row after it, as they were."""
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    before, after = [("healing", "0004_in_lrs_packed")], [("healing", "0005_lrs_members_apart")]
    executor.migrate(before)
    old = executor.loader.project_state(before).apps.get_model("healing", "HealingConfig")
    as_json = [["orders", 0, 1], ["orders", 0, 2], ["orders", 1, 2]]
    old.objects.create(pk=1, in_lrs=as_json, in_lrs_packed=b"", in_lrs_version=8)
    executor = MigrationExecutor(connection)  # (the loader reads the applied ones again)
    executor.migrate(after)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    members._kept.clear()
    assert row().in_lrs_version == 8 == held().version
    assert members.last_seen(row()) == {tuple(m) for m in as_json}


def test_packed_members_read_back_as_the_same_set():
    many = frozenset((f"t{t}", p, s) for t in range(3) for p in range(500) for s in (p % 7, 9))
    assert members.unpacked(members.packed(many)) == many
    assert members.unpacked(members.packed(frozenset())) == frozenset()


def test_a_replica_leaving_because_its_spu_went_down_and_came_back_is_no_shrink(cluster):
    """Down and back between two runs: the snapshot shows it up and out of the LRS, the
    log shows it went down (issue 36: a flapping SPU was called slow)."""
    lrs = Partition.objects.get(index=0).lrs
    behind_the_projections_back(lrs=[s for s in lrs if s != 2])
    Event.objects.create(actor="partition-controller", object_type="spu", object_name="2",
                         operation="resolution", params={"from": "Online", "to": "Offline"})
    Event.objects.create(actor="partition-controller", object_type="spu", object_name="2",
                         operation="resolution", params={"from": "Offline", "to": "Online"})
    healing_check(now_ms=3_000)
    assert row().shrinks == {}
