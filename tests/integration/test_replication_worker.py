"""The real thing: Redis, a Celery worker, replication 3, a leader lost and back."""
from __future__ import annotations

import json
import time

import pytest

from tests.helpers import register_spus, run
from tests.waits import EVENT_WAIT_S

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def partition(topic: str = "t") -> dict:
    return json.loads(run("partition", "list", "--topic", topic, "--json"))[0]


def committed() -> list[str]:
    return [r["value"] for r in json.loads(run("consume", "t", "--json"))]


def wait_until(check, timeout_s: float = 20) -> bool:
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.fixture
def worker(redis_url):
    from celery.contrib.testing.worker import start_worker

    from cluster.services.waiting import worker_running
    from webapp.celery import app

    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=20) as w:
        assert wait_until(worker_running, EVENT_WAIT_S), "the worker did not announce itself"
        yield w
    assert wait_until(lambda: not worker_running(), EVENT_WAIT_S)


def test_a_worker_elects_a_new_leader_loses_no_committed_record_and_takes_the_old_back(worker):
    register_spus(0, 1, 2, 3, online=True)
    run("topic", "create", "t", "--partitions", "1", "--replication", "3", "--min-lrs", "2")
    run("produce", "t", "--value", "a", "--value", "b", "--acks", "all")
    before = partition()
    old = before["leader"]
    assert before["resolution"] == "Online" and sorted(before["lrs"]) == sorted(before["replicas"])

    run("spu", "offline", str(old))
    after = partition()
    assert after["resolution"] == "Online"
    assert after["leader"] in before["lrs"] and after["leader"] != old
    assert sorted(after["lrs"]) == sorted(s for s in before["replicas"] if s != old)
    assert committed() == ["a", "b"]

    run("produce", "t", "--value", "c", "--acks", "all")
    run("spu", "online", str(old))
    assert wait_until(lambda: old in partition()["lrs"])
    back = partition()
    assert back["leader"] == after["leader"], "the old leader rejoins as a follower"
    assert [r["leo"] for r in back["replica_status"]] == [3, 3, 3]
    assert committed() == ["a", "b", "c"]
