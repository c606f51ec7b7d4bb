"""The one place a Spark session is created.

Local runs get small, fast settings: few shuffle partitions, no UI, the
driver bound to 127.0.0.1, quiet logs. ``master`` comes from the caller (the
Django settings pass SPARK_MASTER); the project root is put on the Python
workers' path so local workers import ``planner.core`` from the tree, and on
any other master the pure planner (``planner.core`` and ``planner.spark``) is
shipped to the executors as a zip, so a cluster needs only Python and
pyspark. Executors run the driver's Python unless PYSPARK_PYTHON says
otherwise. See docs/spark.md for running on an existing cluster.
"""
from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from pathlib import Path

from pyspark.sql import SparkSession

PROJECT_ROOT = str(Path(__file__).resolve().parents[2])
DEFAULT_MASTER = "local[*]"
# planner.core loads its modules on first use through cluster/core/lazy.py (pure, stdlib).
SHIPPED = ("planner/__init__.py", "planner/core", "planner/spark", "cluster/__init__.py",
           "cluster/core/__init__.py", "cluster/core/lazy.py")


def spark_session(master: str | None = None, app_name: str = "planner") -> SparkSession:
    master = master or DEFAULT_MASTER
    # Stay on loopback: otherwise Spark picks the host's first interface address.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    _export_pythonpath()
    _stop_other_master(master)
    builder = (SparkSession.builder.master(master).appName(app_name)
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.default.parallelism", str(max(2, os.cpu_count() or 2)))
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.bindAddress", os.environ["SPARK_LOCAL_IP"])
               .config("spark.driver.host", os.environ["SPARK_LOCAL_IP"])
               .config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
               .config("spark.python.worker.reuse", "true"))
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    if not master.startswith("local"):
        session.sparkContext.addPyFile(planner_zip())
    return session


def _stop_other_master(master: str) -> None:
    # getOrCreate would hand back a running session on another master unchanged.
    active = SparkSession.getActiveSession()
    if active is not None and active.sparkContext.master != master:
        active.stop()


def planner_zip() -> str:
    """A zip of the pure planner packages, for executors on other machines."""
    path = Path(tempfile.gettempdir()) / f"planner-core-{os.getpid()}.zip"
    root = Path(PROJECT_ROOT)
    with zipfile.ZipFile(path, "w") as archive:
        for entry in SHIPPED:
            files = [root / entry] if entry.endswith(".py") else sorted((root / entry).rglob("*.py"))
            for file in files:
                archive.write(file, str(file.relative_to(root)))
    return str(path)


def _export_pythonpath() -> None:
    # Local Python workers inherit the driver's environment.
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if PROJECT_ROOT not in parts:
        os.environ["PYTHONPATH"] = os.pathsep.join([PROJECT_ROOT, *parts])
