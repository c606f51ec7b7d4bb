"""The database and its Redis name each other (issue 18, defect 3): a Redis without this
store's marker is refused while the store holds committed records, writing nothing
anywhere; adopting it is explicit and its loss is reported once; a copied database is told
how to take its own identity."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
import redis
from django.core.management import call_command
from django.core.management.base import CommandError

from cluster.adapters import hot_state
from cluster.services.waiting import LocalQueue
from cluster.engine.store_identity import (HotStateMismatch, check_hot_state_identity,
                                             database_identity)
from cluster.models import ClusterState, Event, Partition, Spu
from cluster.services import topic_create
from cluster.services.replication import replication_tick
from tests.helpers import register_spus

pytestmark = [pytest.mark.redis]
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def second_redis(tmp_path_factory) -> str:
    """Another Redis: what a second shell reaches when it forgot REDIS_URL."""
    from webapp.redis_server import start_private_redis

    proc, url = start_private_redis(tmp_path_factory.mktemp("second-redis"))
    yield url
    proc.terminate()
    proc.wait(5)


@pytest.fixture
def other_redis(second_redis) -> redis.Redis:
    client = redis.Redis.from_url(second_redis)
    client.flushdb()
    yield client
    client.flushdb()
    client.close()


def tick() -> None:
    queue = LocalQueue()
    replication_tick(dispatch=queue)
    queue.drain()


def produce(*values: str) -> dict:
    out = StringIO()
    args = [a for v in values for a in ("--value", v)]
    call_command("produce", "orders", "--partition", "0", *args, "--acks", "all", "--json",
                 stdout=out)
    return json.loads(out.getvalue())


def committed_orders() -> None:
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=1, replication=3)
    tick()
    assert produce("a", "b", "c")["state"] == "acknowledged"


@pytest.fixture
def orders(redis_url, db):
    committed_orders()
    return redis_url


def floors() -> dict[int, int]:
    """Per partition with a floor: what a loss restores it to, max(hw, reserved_to), above
    every offset given out (the loss reported is the offsets up to it, an upper bound)."""
    return {i: max(hw, r) for i, hw, r in
            Partition.objects.values_list("index", "hw", "reserved_to") if max(hw, r)}


def store_snapshot() -> tuple:
    """Every row a refused command could have touched."""
    return (list(ClusterState.objects.values()), list(Partition.objects.values()),
            list(Spu.objects.values()), Event.objects.count())


def refusal(*args: str) -> str:
    with pytest.raises(CommandError) as error:
        call_command(*args, stdout=StringIO())
    assert error.value.returncode == 1
    return str(error.value)


@pytest.mark.parametrize("args", [("produce", "orders", "--value", "x", "--acks", "1"),
                                  ("spu", "offline", "1"),
                                  ("consume", "orders")])
def test_a_command_aimed_at_another_empty_redis_exits_1_naming_both_and_writes_nothing(
        orders, other_redis, second_redis, settings, args):
    state = ClusterState.objects.get()
    before = store_snapshot()
    settings.REDIS_URL = second_redis
    line = refusal(*args)
    assert "\n" not in line
    assert orders in line and state.redis_marker in line and second_redis in line, line
    assert "store adopt-redis" in line
    assert other_redis.keys("*") == []
    assert store_snapshot() == before


@pytest.mark.django_db(transaction=True)
def test_the_real_command_line_says_it_in_one_line_on_stderr(redis_url, other_redis,
                                                             second_redis, settings):
    from django.db import connection

    committed_orders()
    env = {**os.environ, "REDIS_URL": second_redis, "PYTHONUNBUFFERED": "1",
           "DATABASE_URL": f"sqlite:///{connection.settings_dict['NAME']}"}
    done = subprocess.run([sys.executable, "manage.py", "produce", "orders", "--value", "x"],
                          cwd=ROOT, env=env, text=True, capture_output=True, timeout=120)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and second_redis in lines[0] and redis_url in lines[0], done.stderr
    assert other_redis.keys("*") == []


def test_the_api_a_page_and_a_tick_refuse_another_redis_the_same_way(
        orders, other_redis, second_redis, settings, api, viewer_client):
    before = store_snapshot()
    settings.REDIS_URL = second_redis
    page = viewer_client.get("/topics/orders/")
    assert page.status_code == 200 and b"hot state refused" in page.content
    answer = api.post("/api/topics/orders/produce/", {"partition": 0, "values": ["x"],
                                                      "acks": "1"}, format="json")
    assert answer.status_code == 409, answer.content
    assert second_redis in answer.json()["error"] and orders in answer.json()["error"]
    with pytest.raises(HotStateMismatch):
        tick()
    assert other_redis.keys("*") == []
    assert store_snapshot() == before


def test_adopting_another_redis_is_explicit_and_its_loss_is_reported_once(
        orders, other_redis, second_redis, settings):
    settings.REDIS_URL = second_redis
    refusal("partition", "list")
    floor = floors()
    assert list(floor) == [0] and floor[0] > 2
    out = StringIO()
    call_command("store", "adopt-redis", "--json", stdout=out)
    adopted = json.loads(out.getvalue())
    assert adopted["changed"] and "3 committed records" in adopted["message"]
    state = ClusterState.objects.get()
    assert (state.redis_url, state.redis_marker) == (second_redis, adopted["marker"])
    tick()
    tick()
    assert Event.objects.filter(operation="redis-adopted").count() == 1
    lost = Event.objects.get(operation="hot-state-lost")
    assert lost.params["missing_records"] == floor[0]
    assert produce("d")["base_offset"] == floor[0]
    again = StringIO()
    call_command("store", "adopt-redis", stdout=again)
    assert "nothing to adopt" in again.getvalue()
    assert Event.objects.filter(operation__in=["redis-adopted", "hot-state-lost"]).count() == 2


def test_a_copied_database_is_refused_with_the_command_that_gives_it_its_own_identity(
        orders):
    store = str(ClusterState.objects.get().store_id)
    owner_key = hot_state.key("owner", store)
    client = hot_state.client()
    original = json.loads(client.get(owner_key))
    # The namespace is the original's: the same store id, another database.
    client.set(owner_key, json.dumps({**original, "database": "postgresql://prod:5432/rooms"}))
    before = store_snapshot()
    line = refusal("produce", "orders", "--value", "x")
    assert "store reidentify" in line and "postgresql://prod:5432/rooms" in line
    assert database_identity() in line
    assert store_snapshot() == before
    floor = floors()
    out = StringIO()
    call_command("store", "reidentify", "--json", stdout=out)
    fresh = json.loads(out.getvalue())
    assert fresh["store_id"] != store
    assert json.loads(client.get(owner_key))["database"] == "postgresql://prod:5432/rooms"
    tick()
    assert Event.objects.filter(operation="reidentified").count() == 1
    assert Event.objects.get(operation="hot-state-lost").params["missing_records"] == floor[0]
    assert produce("d")["base_offset"] == floor[0]


def test_reidentify_refuses_a_database_that_owns_its_namespace(orders):
    with pytest.raises(CommandError) as error:
        call_command("store", "reidentify", stdout=StringIO())
    assert error.value.returncode == 2 and "nothing to reidentify" in str(error.value)


def test_a_fresh_store_claims_the_redis_it_reaches_and_records_it_without_password(
        db, other_redis, second_redis, settings):
    other_redis.config_set("requirepass", "s3cret")
    try:
        with_password = second_redis.replace("redis://", "redis://:s3cret@")
        settings.REDIS_URL = with_password
        store = check_hot_state_identity()
        client = redis.Redis.from_url(with_password)
        owner = json.loads(client.get(hot_state.key("owner", store)))
        state = ClusterState.objects.get()
        assert owner["database"] == database_identity() == state.database_identity
        assert state.redis_marker == owner["marker"]
        assert "s3cret" not in state.redis_url and state.redis_url.endswith(
            second_redis.split("@")[-1].removeprefix("redis://"))
        client.flushdb()
        client.close()
    finally:
        other_redis.execute_command("AUTH", "s3cret")
        other_redis.config_set("requirepass", "")


def test_store_status_prints_both_identities(orders, other_redis, second_redis, settings):
    settings.REDIS_URL = second_redis
    out = StringIO()
    call_command("store", "status", "--json", stdout=out)
    status = json.loads(out.getvalue())
    state = ClusterState.objects.get()
    assert status["recorded_redis"] == {"url": orders, "marker": state.redis_marker}
    assert status["reached_redis"] == {"url": second_redis, "owner": None}
    assert status["database"]["identity"] == database_identity()
    assert status["verdict"] == "refused" and "store adopt-redis" in status["reason"]
    text = StringIO()
    call_command("store", "status", stdout=text)
    assert f"recorded Redis: {orders} (marker {state.redis_marker})" in text.getvalue()
    assert f"reached Redis:  {second_redis} (marker -" in text.getvalue()
    assert other_redis.keys("*") == []


@pytest.mark.django_db
def test_a_store_from_before_markers_claims_its_own_namespace_without_asking(redis_url):
    """An upgrade: committed records, no marker recorded, and the namespace holds the
    engine's meta under this store's id: the Redis is its own, nothing was lost."""
    from cluster.adapters import hot_state
    from cluster.engine import store_identity
    from cluster.ports import bound_to_store
    from cluster.models import ClusterState, Event
    from cluster.services import topic_create
    from cluster.services.replication import replication_tick
    from tests.helpers import register_spus

    register_spus(0, 1, online=True)
    topic_create(name="old", partitions=1, replication=2)
    replication_tick()
    call_command("produce", "old", "--count", "2", "--acks", "all", stdout=StringIO())
    with bound_to_store():
        hot_state.client().delete(hot_state.key(store_identity.OWNER))
    ClusterState.objects.update(redis_marker="", redis_url="")
    replication_tick()
    assert ClusterState.objects.get().redis_marker
    assert not Event.objects.filter(operation="hot-state-lost").exists()
