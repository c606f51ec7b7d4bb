"""Issue 36 item 3: a worker's database connections stay bounded on PostgreSQL.

The cause found: the live pages' trailing flushes run on ``threading.Timer`` threads
(cluster/adapters/live_batches.py), a new thread for each window, and a flush that carries
SPU loads reads the store there (``cluster_load``). Each thread opened its own connection;
when it ended, nothing closed it: Django's connection objects hold reference cycles, so
only a cyclic collection frees them, and the engine's units of work ``gc.freeze`` what
exists, which can keep them for good. A worker's pool process gathered one idle
connection per flush (66 after 70 minutes in the issue; 8 within a minute of a plan here).

The test runs in a pytest of its own on PostgreSQL (the suite runs on SQLite): many
trailing flushes, a freeze after each as the ticks do, then this process's connections
to its database are counted in ``pg_stat_activity``.
"""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import time

import pytest

POSTGRES = os.environ.get("TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
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
    from tests.helpers import register_spus

    if connection.vendor != "postgresql":
        pytest.skip("counts PostgreSQL's connections: run by the test below")
    register_spus(0, 1, online=True)
    before = _connections()
    for n in range(FLUSHES):
        # The first stage flushes at once and opens a window; the second, inside it, is
        # left to the trailing flush on the timer's thread, which reads the SPU loads.
        stage(CLUSTER_GROUP, {"spus": [{"id": 0, "n": n}]}, load=True)
        stage(CLUSTER_GROUP, {"spus": [{"id": 1, "n": n}]}, load=True)
        deadline = time.monotonic() + 30
        while not _timer_done() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert _timer_done(), "the trailing flush ran"
        gc.freeze()  # as every unit of work of the engine does (webapp/perf.py)
    gc.unfreeze()
    assert _connections() <= before + 1, f"{_connections()} connections (before: {before})"


def test_a_worker_s_live_flushes_keep_its_connections_bounded_on_postgresql(tmp_path):
    import psycopg

    name = f"conns_{os.getpid()}"
    base = POSTGRES.rsplit("/", 1)[0]
    env = {**os.environ, "DATABASE_URL": f"{base}/{name}", "VAR_DIR": str(tmp_path)}
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly",
                               "-p", "no:cacheprovider", "--create-db", __file__, "-k",
                               "inner"], env=env, capture_output=True, text=True, timeout=300)
    finally:
        with psycopg.connect(POSTGRES, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "test_{name}" WITH (FORCE)')
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "1 passed" in done.stdout, done.stdout[-3000:]
