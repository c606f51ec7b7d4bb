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

from pathlib import Path

from tests.helpers import passed_on_postgresql

PROBES = Path(__file__).with_name("pg_connection_probes.py")


def test_a_worker_s_live_flushes_keep_its_connections_bounded_on_postgresql(tmp_path):
    passed_on_postgresql(PROBES, None, "conns", 2, env={"VAR_DIR": str(tmp_path)})
