"""One `make run` per var/: a lock a second start meets and refuses.

Two supervisors on one var/ ran two Redis servers on one append-only file and two sets
of workers on one SQLite file, and corrupted the hot state (issue 35). The lock is an
``flock`` on ``var/run.lock``, held by the supervisor for its whole life: the kernel
drops it when that process dies however it dies, so a lock left by a killed run is
recognised (the file is there, nobody holds it) and taken over. The file says who
holds it (PID, URL) so the refusal can name them, and which processes it started: a
supervisor killed with SIGKILL leaves its children running (each leads its own session),
and a new run beside them would be the second installation the lock is there to prevent.
"""
from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOCK_FILE = "run.lock"


class AlreadyRunning(Exception):
    """Another live supervisor holds this var/, or a killed one's processes still run."""


@dataclass
class InstallLock:
    path: Path
    fd: int
    stale_pid: int | None  # the PID a taken-over stale lock named, if any

    def describe(self, url: str, pids: Sequence[int] = ()) -> None:
        """Say where this installation answers and what it started (for a second start)."""
        _write(self.fd, {"pid": os.getpid(), "url": url, "since": int(time.time()),
                         "children": [[pid, _started(pid)] for pid in pids]})

    def release(self) -> None:
        """A clean stop: empty the file (nothing stale to report) and drop the flock."""
        os.ftruncate(self.fd, 0)
        os.close(self.fd)


def acquire(var_dir: Path) -> InstallLock:
    """Hold var/'s lock, or raise AlreadyRunning naming the holder's PID and URL."""
    path = var_dir / LOCK_FILE
    # Not inherited by children (PEP 446): a worker that outlives us must not keep it.
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _read(fd)
        os.close(fd)
        raise AlreadyRunning(
            f"`make run` is already running on {var_dir} (PID {holder.get('pid', '?')}, "
            f"{holder.get('url') or 'still starting'}); stop it first, or set VAR_DIR "
            f"for another installation") from None
    left = _read(fd)
    survivors = _alive(left.get("children") or [])
    if survivors:
        os.close(fd)
        pids = " ".join(map(str, survivors))
        raise AlreadyRunning(
            f"the `make run` that held {path} (PID {left.get('pid', '?')}) was killed, but "
            f"processes it started still run on {var_dir} (PIDs {pids}); stop them "
            f"(kill {pids}) and start again")
    stale = left.get("pid")
    lock = InstallLock(path, fd, stale if isinstance(stale, int) else None)
    lock.describe("")
    return lock


def _started(pid: int) -> float | None:
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def _alive(children: list[Any]) -> list[int]:
    """The recorded children still running (the same process: a reused PID has another
    start time)."""
    alive = []
    for entry in children:
        try:
            pid, started = int(entry[0]), entry[1]
        except (TypeError, ValueError, IndexError):
            continue
        if started is not None and _started(pid) == started:
            alive.append(pid)
    return alive


def _read(fd: int) -> dict[str, Any]:
    try:
        fields = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return fields if isinstance(fields, dict) else {}


def _write(fd: int, fields: dict[str, Any]) -> None:
    data = json.dumps(fields).encode() + b"\n"
    os.ftruncate(fd, 0)
    os.pwrite(fd, data, 0)
