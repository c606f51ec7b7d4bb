"""The real stack for browser tests and live benchmarks: a private Redis, an SQLite file,
daphne, a Celery worker and (optionally) beat, each its own process, all stopped at the end."""
from __future__ import annotations

import http.cookiejar
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from webapp.redis_server import free_port, start_private_redis
from webapp.web_server import daphne_command

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


@dataclass
class Stack:
    var: Path
    env: dict[str, str]
    port: int
    procs: list[subprocess.Popen] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def manage(self, *args: str, timeout: float = 300) -> str:
        done = subprocess.run([PY, "manage.py", *args], cwd=ROOT, env=self.env, text=True,
                              capture_output=True, timeout=timeout)
        assert done.returncode == 0, f"manage.py {' '.join(args)}:\n{done.stdout}{done.stderr}"
        return done.stdout

    def python(self, code: str, timeout: float = 600) -> str:
        """Run ``code`` with Django set up on this stack's store (manage.py shell -c)."""
        return self.manage("shell", "-c", code, timeout=timeout)

    def spawn(self, name: str, args: list[str]) -> subprocess.Popen:
        log = open(self.var / f"{name}.log", "ab")
        proc = subprocess.Popen(args, cwd=ROOT, env=self.env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        self.procs.append(proc)
        return proc

    def log_tails(self, lines: int = 60) -> str:
        """The last ``lines`` of each process's log (for a failed test's report)."""
        out = []
        for log in sorted(self.var.glob("*.log")):
            tail = log.read_text(errors="replace").splitlines()[-lines:]
            out.append(f"---- {log.name} (last {len(tail)} lines)\n" + "\n".join(tail))
        return "\n".join(out)

    def password(self) -> str:
        return (self.var / "operator-password.txt").read_text().strip()

    def session_cookie(self) -> str:
        """Log in as the operator through the login form; the session cookie's value."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        page = opener.open(self.url + "/login/", timeout=30).read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        form = urllib.parse.urlencode({"username": "operator", "password": self.password(),
                                       "csrfmiddlewaretoken": token}).encode()
        request = urllib.request.Request(self.url + "/login/", data=form,
                                         headers={"Referer": self.url + "/login/"})
        opener.open(request, timeout=30).read()
        return next(c.value for c in jar if c.name == "sessionid")


def _wait_listening(port: int, procs: list[subprocess.Popen], seconds: float = 60) -> None:
    import socket
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert all(p.poll() is None for p in procs), "a stack process exited during start-up"
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"nothing listens on {port} after {seconds} s")


def _signal(proc: subprocess.Popen, sig: int) -> None:
    """The process's own group where it leads one (spawned here), else the process."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig) if os.getpgid(proc.pid) == proc.pid else proc.send_signal(sig)
    except ProcessLookupError:
        pass


def _stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        _signal(proc, signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            _signal(proc, signal.SIGKILL)


@contextmanager
def running_stack(var: Path, *, beat: bool = True, worker: bool = True,
                  worker_concurrency: int = 1,
                  settings: dict[str, str] | None = None,
                  before_start: str = "") -> Iterator[Stack]:
    """Redis, migrate, the operator account, ``before_start`` (Python with Django), then
    daphne, a worker and beat; every process is stopped on the way out."""
    redis_proc, redis_url = start_private_redis(var / "redis")
    env = {**os.environ, "VAR_DIR": str(var), "REDIS_URL": redis_url,
           "DATABASE_URL": f"sqlite:///{var / 'stack.sqlite3'}", "PYTHONUNBUFFERED": "1",
           "DJANGO_SETTINGS_MODULE": "webapp.settings", **(settings or {})}
    stack = Stack(var, env, free_port(), [redis_proc])
    try:
        stack.manage("migrate", "--noinput", "-v0")
        stack.manage("ensure_operator")
        if before_start:
            stack.python(before_start)
        stack.spawn("web", daphne_command("127.0.0.1", stack.port, PY))
        if worker:
            stack.spawn("worker", [PY, "-m", "celery", "-A", "webapp", "worker",
                                   "--concurrency", str(worker_concurrency), "-l", "warning"])
        if beat:
            stack.spawn("beat", [PY, "-m", "celery", "-A", "webapp", "beat", "-l", "warning",
                                 "-s", str(var / "celerybeat-schedule")])
        _wait_listening(stack.port, stack.procs)
        yield stack
    finally:
        _stop(stack.procs[1:])
        _stop(stack.procs[:1])
