"""The one place a Spark session is created.

Local runs get small, fast settings: few shuffle partitions, no UI, the
driver bound to 127.0.0.1, quiet logs. ``master`` comes from the caller (the
Django settings pass SPARK_MASTER); the project root is put on the Python
workers' path so they can import ``planner.core``.
"""
from __future__ import annotations

import os
from pathlib import Path

from pyspark.sql import SparkSession

PROJECT_ROOT = str(Path(__file__).resolve().parents[2])
DEFAULT_MASTER = "local[*]"


def spark_session(master: str | None = None, app_name: str = "planner") -> SparkSession:
    # Stay on loopback: otherwise Spark picks the host's first interface address.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    _export_pythonpath()
    builder = (SparkSession.builder.master(master or DEFAULT_MASTER).appName(app_name)
               .config("spark.sql.shuffle.partitions", "4")
               .config("spark.default.parallelism", str(max(2, os.cpu_count() or 2)))
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.host", "127.0.0.1")
               .config("spark.executorEnv.PYTHONPATH", os.environ["PYTHONPATH"])
               .config("spark.python.worker.reuse", "true"))
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def _export_pythonpath() -> None:
    # Local Python workers inherit the driver's environment.
    parts = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if PROJECT_ROOT not in parts:
        os.environ["PYTHONPATH"] = os.pathsep.join([PROJECT_ROOT, *parts])
