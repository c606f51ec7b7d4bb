"""A throw-away Spark standalone cluster (one master, one worker) on loopback.

Started from the installed pyspark's own ``spark-class`` launcher, so tests
and benchmarks can run the planner on a real cluster manager without a Spark
download. Everything binds to 127.0.0.1 on free ports and writes under the
given directory; leaving the ``with`` block stops both processes (and the
executors the worker forked), even when the body failed.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pyspark

SPARK_HOME = Path(pyspark.__file__).resolve().parent
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


class StandaloneError(RuntimeError):
    """The master or the worker did not come up (the message quotes its log)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def standalone_cluster(work_dir: Path, cores: int = 2, memory: str = "2g",
                       timeout: float = 90.0) -> Iterator[str]:
    """Yield the master URL (``spark://127.0.0.1:PORT``) of a running cluster."""
    work_dir.mkdir(parents=True, exist_ok=True)
    env = _environment(work_dir)
    port = free_port()
    url = f"spark://127.0.0.1:{port}"
    started: list[subprocess.Popen] = []
    try:
        started.append(_launch(env, work_dir / "master.log", MASTER_CLASS, "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(free_port())))
        _wait_for(work_dir / "master.log", "I have been elected leader", started[-1], timeout)
        started.append(_launch(env, work_dir / "worker.log", WORKER_CLASS, url,
                               "--host", "127.0.0.1", "--port", str(free_port()),
                               "--webui-port", str(free_port()), "--cores", str(cores),
                               "--memory", memory, "--work-dir", str(work_dir / "work")))
        _wait_for(work_dir / "worker.log", "Successfully registered with master",
                  started[-1], timeout)
        yield url
    finally:
        for process in reversed(started):
            _stop(process)


def _environment(work_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    # SPARK_LOCAL_IP also binds the web UIs, which otherwise listen on 0.0.0.0.
    env.update(SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_LOG_DIR=str(work_dir), SPARK_WORKER_DIR=str(work_dir / "work"))
    return env


def _launch(env: dict[str, str], log: Path, *args: str) -> subprocess.Popen:
    with log.open("wb") as out:
        # A session of its own, so stopping it also stops the executors it forks.
        return subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args], env=env,
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)


def _wait_for(log: Path, line: str, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if line in log.read_text(errors="replace"):
            return
        if process.poll() is not None:
            break
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-2000:]
    raise StandaloneError(f"{log.stem} did not report {line!r}:\n{tail}")


def _stop(process: subprocess.Popen) -> None:
    for sig, wait in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue
