"""`make run`: migrate, load the demo, start Redis, web, worker and beat.

One supervisor so that Ctrl-C or SIGTERM stops every process it started (in
every configuration: private Redis or not, during start-up or later), so a
child that dies is restarted with a line in the log, and so a fresh machine
needs nothing but this repository (DESIGN.md, Processes). Redis is a private
one under var/redis/ unless REDIS_URL is set (never whatever answers on the
default port); either way its URL is recorded in var/redis.url, which commands
and workers read when REDIS_URL is unset.

One installation per var/: a second start on the same var/ is refused while the first
lives (webapp/install_lock.py), and a private Redis is never started on a data directory
a live one holds. Logs go to var/logs/<process>.log, each copied to <name>.log.1 and
emptied past LOG_MAX_MB (10); beat logs warnings only (at info it wrote a line a tick).
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
VAR = Path(os.environ.get("VAR_DIR", ROOT / "var"))
PY = sys.executable
RESTART_PAUSE_S = 1.0
LOG_CHECK_S = 10.0

import redis  # noqa: E402

from webapp import install_lock  # noqa: E402
from webapp.web_server import daphne_command  # noqa: E402
from webapp.redis_server import (URL_FILE, DataDirInUse, record_redis_url,  # noqa: E402
                                 redacted, start_private_redis)


class Interrupted(Exception):
    """SIGINT or SIGTERM: stop everything."""


def _interrupt(*_: object) -> None:
    raise Interrupted


@dataclass
class Child:
    """A supervised process and how to start it again."""
    name: str
    args: list[str]
    log: Path
    proc: subprocess.Popen | None = None
    restarts: int = 0

    def start(self) -> None:
        handle = open(self.log, "ab")
        self.proc = subprocess.Popen(self.args, cwd=ROOT, stdout=handle,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        handle.close()

    def died(self) -> int | None:
        return None if self.proc is None else self.proc.poll()


@dataclass
class Stack:
    """Everything started here, stopped in reverse order (Redis last, so the rest can flush)."""
    redis: subprocess.Popen | None = None
    children: list[Child] = field(default_factory=list)
    url: str = ""
    lock: install_lock.InstallLock | None = None

    def processes(self) -> list[subprocess.Popen]:
        procs = [c.proc for c in reversed(self.children) if c.proc is not None]
        return procs + ([self.redis] if self.redis else [])

    def note(self) -> None:
        """Keep var/run.lock's account of this run (URL, processes) current."""
        if self.lock is not None:
            self.lock.describe(self.url, [p.pid for p in self.processes()])


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def pick_port(preferred: int) -> int:
    for port in range(preferred, preferred + 20):
        if port_free(port):
            return port
    raise SystemExit(f"no free port in {preferred}..{preferred + 19}; set PORT")


def wait_until_listening(host: str, port: int, stack: Stack, seconds: float = 60) -> None:
    """Print the URL only once it answers, so the first click never fails."""
    deadline = time.monotonic() + seconds
    while port_free(port) and time.monotonic() < deadline:
        if any(c.died() is not None for c in stack.children):
            raise SystemExit("a process exited during start-up; see var/logs/")
        time.sleep(0.2)


def manage(*args: str) -> None:
    """A start-up command; its own output says why it failed (e.g. a refused Redis)."""
    code = subprocess.run([PY, "manage.py", *args], cwd=ROOT).returncode
    if code:
        raise SystemExit(f"`manage.py {' '.join(args)}` exited {code}; stopping")


def signal_group(proc: subprocess.Popen, sig: int) -> None:
    # Every child leads its own group (start_new_session); it may be gone already.
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def stop(procs: list[subprocess.Popen]) -> None:
    """SIGTERM each in turn and wait for it; SIGKILL what outlives 10 seconds."""
    for proc in procs:
        if proc.poll() is None:
            signal_group(proc, signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                signal_group(proc, signal.SIGKILL)
                proc.wait(5)


def start_redis(stack: Stack, var: Path = VAR) -> str:
    """The private, persistent Redis; an external one only when REDIS_URL names it.

    Whatever answers on Redis's default port is never joined: it may be
    someone else's. The URL used is recorded in var/redis.url either way.
    """
    external = os.environ.get("REDIS_URL", "")
    if external and os.environ.get("REDIS_PRIVATE") != "1":
        unreachable = external_redis_problem(external)
        if unreachable:
            raise SystemExit(unreachable)
        url, kind = external, "external, from REDIS_URL"
    else:
        try:
            stack.redis, url = start_private_redis(var / "redis")
        except DataDirInUse as exc:
            raise SystemExit(str(exc)) from None
        kind = "private, append-only file in var/redis/; set REDIS_URL to use another"
    record_redis_url(var, url)
    os.environ["REDIS_URL"] = url
    print(f"redis: {redacted(url)} ({kind}; recorded in {var / URL_FILE})", flush=True)
    return url


def external_redis_problem(url: str) -> str | None:
    """None when the Redis of REDIS_URL answers (password and database included)."""
    client = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
    try:
        client.ping()
    except redis.exceptions.RedisError as exc:
        return (f"REDIS_URL={redacted(url)} does not answer ({exc}); start it, or unset "
                f"REDIS_URL to use the private Redis under var/redis/")
    finally:
        client.close()
    return None


def children(host: str, port: int) -> list[Child]:
    logs = VAR / "logs"
    logs.mkdir(exist_ok=True)
    return [
        Child("web", daphne_command(host, port, PY), logs / "web.log"),
        *workers(logs),
        # Warnings only: at info beat logs every task it sends, a line a tick (2 MB an hour).
        Child("beat", [PY, "-m", "celery", "-A", "webapp", "beat", "-l",
                       os.environ.get("BEAT_LOG_LEVEL", "warning"),
                       "-s", str(VAR / "celerybeat-schedule")], logs / "beat.log"),
    ]


def workers(logs: Path) -> list[Child]:
    """WORKER_NODES Celery worker nodes (2) of WORKER_CONCURRENCY processes each (1).

    Two nodes of one process rather than one of two: a node's pool hands its tasks to its
    processes in turn, and a tick on a process that did not run the last one decodes every
    set again (at 10,000 partitions 1.7 s a tick against 0.7 s); each node has a queue of
    its own, and the tick goes to the node that ran it last (cluster/adapters/shard_owners.py).
    """
    nodes = max(1, int(os.environ.get("WORKER_NODES", "2")))
    concurrency = os.environ.get("WORKER_CONCURRENCY", "1")
    return [Child("worker" if i == 1 else f"worker{i}",
                  [PY, "-m", "celery", "-A", "webapp", "worker", "--concurrency", concurrency,
                   "-n", f"worker{i}@%h", "-l", "info"],
                  logs / ("worker.log" if i == 1 else f"worker{i}.log"))
            for i in range(1, nodes + 1)]


def rotate_logs(paths: list[Path], max_bytes: int) -> list[Path]:
    """Copy each log past ``max_bytes`` to <name>.1 (replacing the last one) and empty it.

    Copy and truncate, not rename: the child keeps writing to the file it opened, and
    with O_APPEND its next line lands at the start of the emptied file. A line written
    between the copy and the truncation is lost; a cap on the disk is worth that.
    """
    rotated = []
    for path in paths:
        try:
            if path.stat().st_size <= max_bytes:
                continue
            shutil.copyfile(path, path.with_name(path.name + ".1"))
            os.truncate(path, 0)
        except OSError:
            continue  # not written yet, or the disk is full: try again next time
        rotated.append(path)
    return rotated


def log_max_bytes() -> int:
    return int(float(os.environ.get("LOG_MAX_MB", "10")) * 1024 * 1024)


def start(stack: Stack) -> None:
    start_redis(stack)
    stack.note()
    manage("migrate", "--noinput", "-v0")
    manage("demo", "load")
    manage("ensure_operator")
    host = os.environ.get("HOST", "127.0.0.1")
    port = pick_port(int(os.environ.get("PORT", "8000")))
    stack.children = children(host, port)
    for child in stack.children:
        print(f"  {child.name:<7} log: {child.log}")
        child.start()
    wait_until_listening(host, port, stack)
    stack.url = f"http://{host}:{port}/"
    stack.note()
    print(f"\nControl room running at http://{host}:{port}/")
    print(f"Log in as 'operator'; the password is in {VAR / 'operator-password.txt'}")
    print("Press Ctrl-C to stop every process started here.", flush=True)


def supervise(stack: Stack) -> None:
    """Restart a child that died, saying so, and keep the logs bounded; runs until
    interrupted."""
    logs_checked = time.monotonic()
    while True:
        time.sleep(0.5)
        if time.monotonic() - logs_checked > LOG_CHECK_S:
            logs_checked = time.monotonic()
            rotate_logs([c.log for c in stack.children], log_max_bytes())
        if stack.redis is not None and stack.redis.poll() is not None:
            restart_redis(stack)
            stack.note()
        for child in stack.children:
            code = child.died()
            if code is not None:
                child.restarts += 1
                print(f"{child.name} exited (code {code}); restarting it "
                      f"(restart {child.restarts}); see {child.log}", flush=True)
                time.sleep(RESTART_PAUSE_S)
                child.start()
                stack.note()


def restart_redis(stack: Stack) -> None:
    """Same port, same data directory: it reloads its append-only file."""
    print(f"redis exited (code {stack.redis.returncode}); restarting it", flush=True)
    port = urlparse(os.environ["REDIS_URL"]).port
    stack.redis, _ = start_private_redis(VAR / "redis", port)


def main() -> int:
    # Set both explicitly: a shell that starts us in the background may have
    # left SIGINT ignored, and Python keeps an inherited "ignore".
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    VAR.mkdir(parents=True, exist_ok=True)
    try:
        lock = install_lock.acquire(VAR)
    except install_lock.AlreadyRunning as exc:
        print(exc, file=sys.stderr, flush=True)
        return 1
    if lock.stale_pid is not None and lock.stale_pid != os.getpid():
        print(f"taking over {lock.path}: the run that held it (PID {lock.stale_pid}) "
              f"is gone", flush=True)
    stack = Stack(lock=lock)
    try:
        start(stack)
        supervise(stack)
    except (Interrupted, KeyboardInterrupt):
        print("\nstopping...", flush=True)
        return 0
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        stop(stack.processes())  # var/redis.url stays: it names this installation's Redis
        lock.release()  # last: until every child is gone, a second start must wait
    return 1


if __name__ == "__main__":
    sys.exit(main())
