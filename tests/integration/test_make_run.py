"""`make run`'s supervisor: it serves the app, and an interrupt stops every process."""
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from webapp.redis_server import free_port

ROOT = Path(__file__).resolve().parents[2]


def _wait_for_line(proc: subprocess.Popen, needle: str, seconds: float) -> str:
    deadline, seen = time.monotonic() + seconds, []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        seen.append(line)
        if needle in line:
            return line
        if not line and proc.poll() is not None:
            break
    raise AssertionError(f"never printed {needle!r}:\n{''.join(seen)}")


@pytest.mark.redis
def test_run_serves_the_app_and_an_interrupt_stops_every_process(tmp_path, redis_server):
    port = free_port()
    env = {**os.environ, "VAR_DIR": str(tmp_path), "PORT": str(port), "REDIS_URL": redis_server,
           "DATABASE_URL": f"sqlite:///{tmp_path / 'run.sqlite3'}", "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "scripts/run.py"], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        url = _wait_for_line(proc, "Control room running at", 120).split()[-1]
        assert (tmp_path / "operator-password.txt").exists()
        children = psutil.Process(proc.pid).children(recursive=True)
        assert len(children) >= 3
        with urllib.request.urlopen(url + "login/", timeout=10) as page:
            assert page.status == 200 and b"Log in" in page.read()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
        gone, alive = psutil.wait_procs(children, timeout=15)
        assert not alive, [p.cmdline() for p in alive]
    finally:
        _kill_tree(proc)


def _kill_tree(proc: subprocess.Popen) -> None:
    """Never leave the supervisor's children behind, even when the test fails."""
    try:
        family = psutil.Process(proc.pid).children(recursive=True)
    except psutil.NoSuchProcess:
        family = []
    for child in family:
        child.kill()
    if proc.poll() is None:
        proc.kill()
    psutil.wait_procs(family, timeout=10)
