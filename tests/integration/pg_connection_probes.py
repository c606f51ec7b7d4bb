"""Issue 36 item 3's probes, run on PostgreSQL by test_worker_db_connections.py in a
pytest of its own (the suite runs on SQLite; this file's name keeps it out of the suite's
collection, so it is never skipped there)."""
from __future__ import annotations

import gc
import time

import pytest

FLUSHES = 30


def _connections() -> int:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = "
                       "current_database() AND backend_type = 'client backend'")
        return cursor.fetchone()[0]


def _timer_done() -> bool:
    from cluster.adapters import live_batches

    return live_batches._timer is None


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_inner_trailing_live_flushes_leave_no_connection_open(redis_url):
    from django.db import connection

    from cluster.adapters.live_batches import stage
    from cluster.live import CLUSTER_GROUP
    from cluster.projections.live import cluster_load
    from tests.helpers import register_spus

    assert connection.vendor == "postgresql", "run by test_worker_db_connections.py"
    register_spus(0, 1, online=True)
    before = _connections()
    for n in range(FLUSHES):
        # The first stage flushes at once and opens a window; the second, inside it, is
        # left to the trailing flush on the timer's thread, which reads the SPU loads.
        stage(CLUSTER_GROUP, {"spus": [{"id": 0, "n": n}]}, load=True, loads=cluster_load)
        stage(CLUSTER_GROUP, {"spus": [{"id": 1, "n": n}]}, load=True, loads=cluster_load)
        deadline = time.monotonic() + 30
        while not _timer_done() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _timer_done(), "the trailing flush ran"
        gc.freeze()  # as every unit of work of the engine does (cluster/perf.py)
    gc.unfreeze()
    assert _connections() <= before + 1, f"{_connections()} connections (before: {before})"


@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_inner_a_worker_carrying_a_plan_out_keeps_its_connections_bounded(redis_url):
    """A Celery worker (solo pool, in this process) ticks until a plan of a dozen moves is
    done and runs the self-healing check again and again: the process ends with the
    connections it began with, give or take the worker's own."""
    import json

    from celery.contrib.testing.worker import start_worker
    from django.db import connection

    from cluster.services.waiting import worker_running
    from healing.tasks import healing_check
    from planner.execution import plan_apply, plan_wait
    from tests.helpers import register_spus, run
    from tests.integration.test_replication_worker import wait_until
    from webapp.celery import app

    assert connection.vendor == "postgresql", "run by test_worker_db_connections.py"
    register_spus(0, 1, 2, 3, online=True)
    run("topic", "create", "t", "--partitions", "12", "--replication", "2")
    run("produce", "t", "--partition", "0", "--count", "50", "--acks", "all")
    register_spus(4, 5, online=True)
    plan = json.loads(run("plan", "rebalance", "--json"))
    assert len(plan["moves"]) >= 6
    before = _connections()
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=20):
        assert wait_until(worker_running, 5), "the worker did not announce itself"
        plan_apply(plan_id=plan["id"], max_moves=2, by="test")
        assert plan_wait(plan_id=plan["id"], timeout_s=240)
        for _ in range(10):
            healing_check.delay().get(timeout=60)
        deadline = time.monotonic() + 30
        while not _timer_done() and time.monotonic() < deadline:
            time.sleep(0.05)
        during = _connections()
    assert during <= before + 2, f"{during} connections while the worker ran (before: {before})"
