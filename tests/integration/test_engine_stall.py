"""A stalled engine is visible (issue 35): /readyz fails naming the engine with the last
error, pages carry a banner, /metrics counts failed ticks and says when one last
committed; all of it clears once ticks commit again. Ticks run through the workers' task
shell (cluster/tasks.py), on a Redis of the test's own that is made to refuse writes."""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
import redis

from tests.django_fixtures import point_redis_at
from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]


@pytest.fixture
def own_redis(tmp_path: Path, settings, redis_url):
    """A private Redis that this test alone may make refuse writes (CONFIG SET)."""
    from webapp.redis_server import start_private_redis

    proc, url = start_private_redis(tmp_path / "redis")
    point_redis_at(url, settings)
    client = redis.Redis.from_url(url)
    try:
        yield client
    finally:
        client.close()
        point_redis_at(redis_url, settings)
        proc.terminate()
        proc.wait(10)


def refuse_writes(client: redis.Redis, refuse: bool) -> None:
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", "1" if refuse else "0")


def keep_a_worker(client: redis.Redis) -> None:
    """The heartbeat a live worker keeps (a write: done before writes are refused)."""
    from cluster.adapters import hot_state

    client.set(hot_state.WORKER, "test-worker", ex=600)


def tick() -> None:
    from cluster import tasks

    try:
        tasks.replication_tick(forwarded=True)
    except Exception:  # noqa: BLE001 - a failed tick is what this test provokes
        pass


def ticks_until(check, most: int, what: str) -> None:
    """Tick (as beat would ask the worker) until ``check()``; bounded by ticks, not time."""
    for _ in range(most):
        if check():
            return
        tick()
    assert check(), f"after {most} ticks, never: {what}"


def failures_total(client) -> float:
    text = client.get("/metrics").content.decode()
    return float(re.search(r"^controlroom_replication_tick_failures_total (\S+)$", text,
                           re.M).group(1))


def test_a_redis_that_refuses_writes_stalls_the_engine_visibly_and_lifting_it_clears_it(
        own_redis, client, operator_client, settings):
    register_spus(0, 1, 2, rack="rack-a", online=True)
    run("topic", "create", "t", "--partitions", "3", "--replication", "3")
    keep_a_worker(own_redis)
    ticks_until(lambda: client.get("/readyz").status_code == 200, 5, "ready while ticks commit")
    assert client.get("/readyz").json()["checks"]["engine"] == {"ok": True, "error": None}
    assert "Replication stalled" not in operator_client.get("/").content.decode()
    before = failures_total(client)

    refuse_writes(own_redis, True)
    try:
        ticks_until(lambda: "engine" in client.get("/readyz").json()["failing"],
                    settings.REPLICATION_STALL_FAILURES + 3, "not ready, naming the engine")
        body = client.get("/readyz").json()
        assert body["failing"] == ["redis", "engine"], body
        assert "Redis refuses writes" in body["checks"]["redis"]["error"], body
        error = body["checks"]["engine"]["error"]
        assert "engine stalled" in error and "maxmemory" in error, error
        page = operator_client.get("/").content.decode()
        assert "Replication stalled since" in page and "maxmemory" in page
        assert failures_total(client) >= before + settings.REPLICATION_STALL_FAILURES
    finally:
        refuse_writes(own_redis, False)
    ticks_until(lambda: client.get("/readyz").status_code == 200, 5, "ready again")
    assert "Replication stalled" not in operator_client.get("/").content.decode()
    metrics = client.get("/metrics").content.decode()
    last = float(re.search(r"^controlroom_replication_tick_last_success_timestamp_seconds "
                           r"(\S+)$", metrics, re.M).group(1))
    assert last > time.time() - 600


def test_no_tick_committed_for_the_stall_time_is_a_stall_even_without_a_failure(
        own_redis, client, operator_client, settings):
    from cluster.ports import bound_to_store
    from cluster.services import tick_health

    keep_a_worker(own_redis)
    assert client.get("/readyz").json()["failing"] == ["engine"]  # none committed yet
    assert "Replication stalled" not in operator_client.get("/").content.decode()  # starting
    with bound_to_store():
        tick_health.tick_committed(int((time.time() - settings.REPLICATION_STALL_S - 5) * 1000))
    body = client.get("/readyz").json()
    assert body["failing"] == ["engine"]
    assert "no tick has committed for" in body["checks"]["engine"]["error"]
    assert "Replication stalled since" in operator_client.get("/").content.decode()
    tick()
    assert client.get("/readyz").status_code == 200


def test_with_shards_a_tick_commits_when_its_shard_tasks_do_not_when_it_hands_them_out(
        own_redis, client, settings, monkeypatch):
    from cluster import tasks

    settings.REPLICATION_SHARDS = 2
    monkeypatch.setattr(tasks.replication_shard_tick, "apply_async", lambda **_: None)
    register_spus(0, 1, 2, rack="rack-a", online=True)
    run("topic", "create", "t", "--partitions", "4", "--replication", "3")
    keep_a_worker(own_redis)
    for _ in range(3):
        report = tasks.replication_tick()
        if report["shards"]:
            break  # a quiet coordinator: it handed the shards out
    assert report["shards"] == 2, report
    from cluster.adapters.redis_keys import key
    from cluster.ports import bound_to_store
    from cluster.services.tick_health import LAST_COMMIT

    with bound_to_store():  # forget any whole tick the first ones ran (topology changed)
        own_redis.delete(key(LAST_COMMIT))
    assert tasks.replication_tick()["shards"] == 2
    assert "engine" in client.get("/readyz").json()["failing"]  # handed out, not committed
    tasks.replication_shard_tick(0, [])
    assert client.get("/readyz").status_code == 200
