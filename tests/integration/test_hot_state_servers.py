"""The hot state over two Redis servers (HOT_STATE_REDIS_URLS, cluster/adapters/hot_servers.py):
each shard's keys live on the server its placement names and nowhere else, a shard's save is
fenced by the lease beside its keys, and a change of placement moves the sets before any
shard reads them."""
from __future__ import annotations

import re
import time

import pytest
import redis

from cluster.adapters import hot_placement, hot_servers, hot_state, lease, shards
from cluster.adapters.lease import LeaseLost
from cluster.adapters.redis_keys import store_namespace
from cluster.ports import bound_to_store
from cluster.testing.invariants import InvariantChecker
from cluster.services import topic_create
from cluster.services.records import records_produce
from cluster.services.replication import (replication_coordinate, replication_shard_tick,
                                          replication_tick)
from cluster.services.waiting import LocalQueue
from tests.helpers import register_spus, sharded_tick

pytestmark = [pytest.mark.django_db, pytest.mark.redis]
SHARDS = 4
PARTITIONS = 16


@pytest.fixture
def spread(two_hot_servers, settings, monkeypatch):
    settings.REPLICATION_SHARDS = SHARDS
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 600  # no follower leaves the LRS meanwhile
    monkeypatch.setattr(shards, "BLOCK", 4)  # blocks of 4: 16 partitions over 4 shards
    register_spus(0, 1, 2, 3, online=True)
    topic_create(name="orders", partitions=PARTITIONS, replication=3)
    whole_tick()
    return two_hot_servers


def whole_tick(now: int | None = None) -> None:
    queue = LocalQueue()
    replication_tick(now=now, dispatch=queue)
    queue.drain()


def produce(partition: int, count: int = 3) -> None:
    queue = LocalQueue()
    outcome = records_produce(topic="orders", partition=partition, acks=1, count=count,
                              dispatch=queue)
    queue.drain()
    assert outcome.state == "acknowledged", outcome


def keys_by_server(urls: list[str]) -> list[dict[str, object]]:
    """Every key of this store on each server, with a hash's fields (its partitions)."""
    with bound_to_store():
        prefix = f"repl:{{{store_namespace()}}}:"
    out = []
    for url in urls:
        client = redis.Redis.from_url(url, decode_responses=True)
        found: dict[str, object] = {}
        for k in client.scan_iter(match=prefix + "*"):
            name = k[len(prefix):]
            found[name] = (set(client.hkeys(k)) if name.startswith("sets:") else None)
        out.append(found)
        client.close()
    return out


def expected_server(partition: int) -> int:
    return shards.shard_of(("orders", partition), SHARDS) % 2


def test_each_shards_keys_live_on_the_server_its_placement_names_and_nowhere_else(spread):
    checker = InvariantChecker()
    for p in range(PARTITIONS):
        produce(p, count=8)  # a block of offsets: every set has records apart
    for second in range(3):
        sharded_tick(checker, now=5_000_000 + 1000 * second)
    first, second = keys_by_server(spread)
    assert {hot_servers.server_of_shard(s) for s in range(SHARDS)} == {0, 1}
    for server, found in enumerate((first, second)):
        fields = found.get("sets:orders") or set()
        assert fields and {expected_server(int(p)) for p in fields} == {server}, (server, fields)
        recs = {int(k.rsplit(":", 1)[1]) for k in found if k.startswith("recs:orders:")}
        assert recs and {expected_server(p) for p in recs} == {server}, (server, recs)
        for name in found:
            shard = re.match(r"lock:shard:(\d+)", name)
            if shard:  # its lease's line and generation
                assert int(shard.group(1)) % 2 == server, (server, name)
    # Every set on exactly one server, every partition's records too.
    assert first["sets:orders"] | second["sets:orders"] == {str(p) for p in range(PARTITIONS)}
    assert not first["sets:orders"] & second["sets:orders"]
    # The second holds its shards' keys only: the meta, the log, the cluster lease and the
    # counters are all on the first.
    assert {n for n in second if not re.match(r"(sets:|recs:|lock:shard:[13]\b)", n)} == set()
    for name in ("meta", "meta:topics", "mlog", "mlog:head", "fence", "lock:sets-gen",
                 "record_ids"):
        assert name in first, name
    hot = hot_state.load()
    assert {k: (rs.hw, rs.leo) for k, rs in hot.state.replica_sets.items()} == {
        ("orders", p): (8, 8) for p in range(PARTITIONS)}


def test_a_shard_on_the_second_server_whose_lease_expired_has_its_save_refused(spread,
                                                                               settings):
    shard = 1  # on the second server
    settings.REPLICATION_LOCK_LEASE_S = 0.2
    stale = hot_state.load_selected(lambda t: shards.keys_of_shard(t, shard, SHARDS))
    second = redis.Redis.from_url(spread[1])
    with bound_to_store(), lease.held(1, shards.lock_name(shard)) as held:
        assert held.server == 1 and second.get(held.lock_key) == held.token.encode()
        held._stop.set()  # a stopped process renews nothing
        time.sleep(0.5)
        replication_shard_tick(shard, dispatch=LocalQueue())  # another holder took it
        after = [second.hgetall(hot_state.sets_key("orders")),
                 hot_state.client().hgetall(hot_state.sets_key("orders"))]
        for rs in stale.state.replica_sets.values():
            rs.epoch += 100  # a change the stale holder would save
        with pytest.raises(LeaseLost):
            hot_state.save_sets(stale, lease.Held((held,)))
    assert [second.hgetall(hot_state.sets_key("orders")),
            hot_state.client().hgetall(hot_state.sets_key("orders"))] == after
    second.close()


def figures() -> dict:
    return {k: (rs.hw, rs.leo, rs.leader, rs.epoch, tuple(rs.lrs))
            for k, rs in hot_state.load().state.replica_sets.items()}


def test_a_changed_placement_is_moved_by_the_next_whole_tick_before_any_shard_reads(
        spread, settings):
    for p in range(PARTITIONS):
        produce(p)
    sharded_tick(InvariantChecker(), now=6_000_000)
    before = figures()
    settings.HOT_STATE_REDIS_URLS = []  # everything back on the first server
    with pytest.raises(hot_placement.PlacementMoved):
        replication_shard_tick(1, dispatch=LocalQueue())
    assert replication_coordinate(now=6_001_000, dispatch=LocalQueue()) is None  # whole tick
    first, second = keys_by_server(spread)
    assert first["sets:orders"] == {str(p) for p in range(PARTITIONS)}
    assert not [n for n in second if n.startswith(("sets:", "recs:"))], second
    assert {k: v[:2] for k, v in figures().items()} == {k: v[:2] for k, v in before.items()}
    settings.HOT_STATE_REDIS_URLS = spread  # and out again
    assert replication_coordinate(now=6_002_000, dispatch=LocalQueue()) is None
    first, second = keys_by_server(spread)
    assert {expected_server(int(p)) for p in second["sets:orders"]} == {1}
    assert {expected_server(int(p)) for p in first["sets:orders"]} == {0}
    produce(0)
    sharded_tick(InvariantChecker(), now=6_003_000)
    after = figures()
    assert after[("orders", 0)][:2] == (6, 6)
    assert all(after[("orders", p)][:2] == (3, 3) for p in range(1, PARTITIONS))


def test_readiness_checks_every_hot_state_server(two_hot_servers, settings):
    import socket

    from cluster.metrics.readiness import readiness

    assert readiness()["checks"]["redis"]["ok"], readiness()
    with socket.socket() as held:  # bound, never listening: every connection is refused
        held.bind(("127.0.0.1", 0))
        settings.HOT_STATE_REDIS_URLS = [two_hot_servers[0],
                                         f"redis://127.0.0.1:{held.getsockname()[1]}/0"]
        assert not readiness()["checks"]["redis"]["ok"]


def test_a_restart_of_the_second_server_that_kept_its_sets_is_checked_quietly_losing_nothing(
        spread):
    from tests.django_fixtures import restart_second_redis

    checker = InvariantChecker()
    for p in range(PARTITIONS):
        produce(p)
    sharded_tick(checker, now=8_000_000)
    before = figures()
    run = hot_state.redis_run_id()
    assert replication_coordinate(now=8_001_000, dispatch=LocalQueue()) is not None  # quiet
    restart_second_redis()
    assert hot_state.redis_run_id() != run
    # Another run id, and the second server still holds every set placed there: the quiet
    # tick checks it (no whole tick) and notes the run.
    assert replication_coordinate(now=8_002_000, dispatch=LocalQueue()) is not None
    assert hot_state.load().checked == hot_state.redis_run_id()
    checker.check(hot_state.load().state)
    assert {k: v[:2] for k, v in figures().items()} == {k: v[:2] for k, v in before.items()}
    produce(expected_partition(1))
    sharded_tick(checker, now=8_003_000)
    assert figures()[("orders", expected_partition(1))][:2] == (6, 6)


def expected_partition(server: int) -> int:
    """A partition whose shard lives on ``server``."""
    return next(p for p in range(PARTITIONS) if expected_server(p) == server)


def test_placement_is_shard_mod_servers_and_the_cluster_lease_stays_on_the_first(settings):
    settings.REPLICATION_SHARDS = 12
    settings.HOT_STATE_REDIS_URLS = ["redis://a:1/0", "redis://b:2/0", "redis://c:3/0"]
    assert [hot_servers.server_of_shard(s) for s in range(6)] == [0, 1, 2, 0, 1, 2]
    assert hot_servers.server_of_lock("repl:{x}:lock:shard:11") == 2
    assert hot_servers.server_of_lock("repl:{x}:lock:shard:10:sets-gen") == 1
    assert hot_servers.server_of_lock("repl:{x}:lock:shard:4:waiters") == 1
    assert hot_servers.server_of_lock("repl:{x}:lock") == 0
    assert hot_servers.server_of_lock("repl:{x}:lock:sets-gen") == 0
    settings.REPLICATION_SHARDS = 1  # one shard: everything on the first, whatever the list
    assert not hot_servers.spread() and hot_servers.server_of_lock("repl:{x}:lock:shard:1") == 0
    settings.REPLICATION_SHARDS, settings.HOT_STATE_REDIS_URLS = 4, []
    assert not hot_servers.spread() and list(hot_servers.servers()) == [0]


def test_a_second_server_back_empty_has_its_sets_made_again_at_the_stores_offsets(spread):
    from cluster.models import Event, Partition
    from tests.django_fixtures import restart_second_redis

    checker = InvariantChecker()
    for p in range(PARTITIONS):
        produce(p)
    sharded_tick(checker, now=9_000_000)
    before = figures()
    # A remade set goes on from its row's floor: its reservation, above every offset given.
    floors = {("orders", i): max(hw, reserved) for i, hw, reserved in Partition.objects
              .filter(topic__name="orders").values_list("index", "hw", "reserved_to")}
    redis.Redis.from_url(spread[1]).flushdb()  # replayed from its append-only file: empty
    restart_second_redis()
    assert replication_coordinate(now=9_001_000, dispatch=LocalQueue()) is None  # whole tick
    after = figures()
    checker.check(hot_state.load().state)
    assert set(after) == set(before)
    remade = [k for k in before if expected_server(k[1]) == 1]
    assert {k: v[:2] for k, v in after.items()} == {
        k: (floors[k], floors[k]) if k in remade else v[:2] for k, v in before.items()}
    assert all(floors[k] >= before[k][1] for k in remade)
    assert remade and all(after[k][3] > before[k][3] for k in remade)  # a newer epoch
    lost = Event.objects.filter(operation="hot-state-lost")
    assert lost.exists(), "the loss of the records is reported"
    produce(expected_partition(1))
    sharded_tick(checker, now=9_002_000)
    floor = floors[("orders", expected_partition(1))]
    assert figures()[("orders", expected_partition(1))][:2] == (floor + 3, floor + 3)


def test_a_second_server_back_from_a_file_older_than_a_topic_takes_the_whole_tick_to_remake_it(
        spread, tmp_path):
    import shutil

    from tests.django_fixtures import restart_second_redis

    older = tmp_path / "older"
    checker = InvariantChecker()
    sharded_tick(checker, now=9_500_000)
    # Its file copied before the topic below was made, and put back after.
    restart_second_redis(lambda data: shutil.copytree(data, older))
    topic_create(name="late", partitions=PARTITIONS, replication=3)
    sharded_tick(checker, now=9_501_000)  # made alone under every lease, on both servers
    assert {("late", p) for p in range(PARTITIONS)} <= set(figures())
    restart_second_redis(lambda data: (shutil.rmtree(data), shutil.copytree(older, data)))
    assert not redis.Redis.from_url(spread[1]).exists(hot_state.sets_key("late"))

    # The second server lacks the sets of "late" placed there: the whole tick remakes them.
    assert replication_coordinate(now=9_502_000, dispatch=LocalQueue()) is None
    assert {("late", p) for p in range(PARTITIONS)} <= set(figures())
    checker.check(hot_state.load().state)
