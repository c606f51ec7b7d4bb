"""A Redis restart, sharded: the coordinator's quiet tick checks it when no replica set is
needed for that (the log came back whole, and every server that restarted holds the sets
the meta places there), and the whole tick still checks one that lost entries
(cluster/services/recovery.py; spread over two servers: test_hot_state_servers.py).

The hot state here is on a private Redis of the test's own, restarted for real from its
append-only file (or from an older copy of it), never the suite's server."""
from __future__ import annotations

import shutil

import pytest

from cluster.adapters import hot_state, metadata_log, unloaded
from cluster.models import Event
from cluster.projections import store as store_projection
from cluster.services import topic_create
from cluster.services.outages import spu_offline
from cluster.services.records import records_produce
from cluster.services.replication import replication_coordinate
from cluster.services.waiting import LocalQueue
from cluster.testing.invariants import InvariantChecker
from tests.django_fixtures import point_redis_at
from tests.helpers import register_spus, sharded_tick, watching_loads
from tests.stack import HotRedis

pytestmark = [pytest.mark.django_db, pytest.mark.redis]
SHARDS = 4


@pytest.fixture
def server(redis_url, tmp_path, settings, monkeypatch):
    """Four shards of blocks of 4 over 16 partitions, everything on a Redis of the test's."""
    from cluster.adapters import shards

    own = HotRedis(tmp_path / "hot")  # stopped and started again on its file
    point_redis_at(own.url, settings)
    settings.REPLICATION_SHARDS = SHARDS
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 600  # no follower leaves the LRS meanwhile
    monkeypatch.setattr(shards, "BLOCK", 4)
    register_spus(0, 1, 2, 3, online=True)
    topic_create(name="orders", partitions=16, replication=3)
    try:
        yield own
    finally:
        own.stop()


@pytest.fixture
def whole(monkeypatch):
    """A 1 for each whole tick the coordinator runs."""
    return watching_loads(monkeypatch, lambda hot: None)


def produce(partition: int) -> None:
    queue = LocalQueue()
    outcome = records_produce(topic="orders", partition=partition, acks=1, count=3,
                              dispatch=queue)
    queue.drain()
    assert outcome.state == "acknowledged", outcome


def figures() -> dict:
    sets = hot_state.load().state.replica_sets
    return {k: (rs.hw, rs.leo, rs.leader, rs.epoch) for k, rs in sets.items()}


def test_a_restart_that_kept_the_log_is_checked_by_the_quiet_tick_with_no_whole_tick(
        server, whole):
    checker = InvariantChecker()
    sharded_tick(checker, now=7_000_000)  # the first: whole, it makes the sets
    for p in range(16):
        produce(p)
    assert sharded_tick(checker, now=7_001_000) is not None
    before, run, ticks = figures(), hot_state.redis_run_id(), len(whole)
    server.stop()
    server.restart()
    assert hot_state.redis_run_id() != run

    work = sharded_tick(checker, now=7_002_000)

    assert work is not None and sorted(work) == list(range(SHARDS)), "the shards stepped"
    assert len(whole) == ticks, "no whole tick for a restart that lost nothing"
    assert hot_state.load().checked == hot_state.redis_run_id()  # noted: checked once
    assert {k: v[1:] for k, v in figures().items()} == {k: v[1:] for k, v in before.items()}
    produce(5)
    sharded_tick(checker, now=7_003_000)
    assert figures()[("orders", 5)][:2] == (6, 6)
    assert not Event.objects.filter(operation="hot-state-lost").exists()


def test_a_restart_from_an_older_file_behind_the_store_still_takes_the_whole_tick(
        server, whole, tmp_path):
    checker = InvariantChecker()
    sharded_tick(checker, now=8_000_000)
    server.stop()
    shutil.copytree(server.data, tmp_path / "older")
    server.restart()  # (on its port and file)
    spu_offline(spu_id=3)  # elections: entries the store applies, then lost with the newer file
    sharded_tick(checker, now=8_001_000)
    store_projection.catch_up()
    applied = store_projection.applied_offset()
    server.stop()
    shutil.rmtree(server.data)
    shutil.copytree(tmp_path / "older", server.data)
    server.restart()  # (on its port and file)
    assert metadata_log.head() < applied, "the older file ends before the store's offset"
    ticks = len(whole)

    assert replication_coordinate(now=8_002_000, dispatch=LocalQueue()) is None
    assert len(whole) == ticks + 1
    hot = hot_state.load()
    assert hot.checked == hot_state.redis_run_id()
    assert not isinstance(hot.state.replica_sets, unloaded.UnloadedSets)
    assert metadata_log.head() >= applied  # offsets go on after the store's


@pytest.mark.parametrize("before, after, restarted", [
    (None, "a", None),                    # a fresh meta: the whole tick checks it
    ("a", "a", frozenset()),
    ("a", "b", {0}),                      # one server
    ("a|b|4", "c|b|4", {0}),              # spread: the meta's server
    ("a|b|4", "a|c|4", {1}),
    ("a|b|4", "c|d|4", {0, 1}),
    ("a|b|4", "a|b|8", None),             # another placement: the sets move first
    ("a|b|4", "a", None),
    ("a", "a|b|4", None),
    ("a|b|4", "a|b|c|4", None),
])
def test_the_servers_restarted_are_read_off_the_run_ids_unless_the_placement_changed(
        before, after, restarted):
    assert hot_state.restarted_servers(before, after) == (None if restarted is None
                                                else frozenset(restarted))
