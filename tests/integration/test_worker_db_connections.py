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

import os
import subprocess
import sys
from pathlib import Path

POSTGRES = os.environ.get("TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
PROBES = Path(__file__).with_name("pg_connection_probes.py")


def test_a_worker_s_live_flushes_keep_its_connections_bounded_on_postgresql(tmp_path):
    import psycopg

    name = f"conns_{os.getpid()}"
    base = POSTGRES.rsplit("/", 1)[0]
    env = {**os.environ, "DATABASE_URL": f"{base}/{name}", "VAR_DIR": str(tmp_path)}
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:randomly",
                               "-p", "no:cacheprovider", "--create-db", str(PROBES)],
                              env=env, capture_output=True, text=True, timeout=300)
    finally:
        with psycopg.connect(POSTGRES, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "test_{name}" WITH (FORCE)')
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout, done.stdout[-3000:]
