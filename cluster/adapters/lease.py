"""The fenced lease every load-modify-save of the hot state holds.

A holder takes a fresh token from a counter and sets the lock key to it
(``SET NX PX``) for a short lease, renewed by a thread while it works. Every
write of hot state is a transaction that WATCHes the lock, checks it still
holds that token, and extends the lease with the write itself (MULTI/EXEC):
another holder can only write after setting the lock, which aborts the
transaction, so a holder that stalled past its lease (SIGSTOP, a long pause)
has its late save refused atomically instead of overwriting a newer state;
a crashed holder delays the engine by one lease, not a minute. (A Lua script
did the same check at four times the cost of this transaction for a busy tick.)
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import redis
from django.conf import settings

from cluster.adapters.redis_keys import client, key

POLL_S = 0.02

_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


class WriteOp(NamedTuple):
    """One write of a fenced transaction: ``set``, ``sadd``, ``srem`` (arg a value),
    ``setex`` (arg (seconds, value)), ``del``, ``hset`` (arg a mapping) or ``hdel``
    (arg a list of fields)."""
    op: str
    key: str
    arg: Any = None


class LeaseLost(TimeoutError):
    """The lease expired and another holder took it: this holder's writes are refused."""


@dataclass
class Lease:
    lock_key: str
    token: str
    lease_ms: int
    lost: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)
    # A renewal touching the lock mid-write would abort the write's transaction.
    writing: threading.Lock = field(default_factory=threading.Lock)

    def renew_until_released(self) -> None:
        # A third of the lease: two renewals may fail before another holder can step in.
        while not self._stop.wait(self.lease_ms / 3000):
            try:
                with self.writing:
                    renewed = client().eval(_RENEW, 1, self.lock_key, self.token, self.lease_ms)
            except redis.exceptions.RedisError:
                continue  # a transient error skips one renewal; the next may still make it
            if not renewed:
                self.lost = True
                return

    def release(self) -> None:
        self._stop.set()
        try:
            client().eval(_RELEASE, 1, self.lock_key, self.token)
        except redis.exceptions.RedisError:
            pass  # an unreleased lease expires by itself


_current: ContextVar[Lease | None] = ContextVar("hot_state_lease", default=None)


def acquire(wait_s: float) -> Lease:
    """Take the lease, waiting up to ``wait_s``; TimeoutError if another holder keeps it."""
    r, lock_key = client(), key("lock")
    lease_ms = max(100, int(settings.REPLICATION_LOCK_LEASE_S * 1000))
    token = str(r.incr(key("fence")))
    deadline = time.monotonic() + wait_s
    while not r.set(lock_key, token, nx=True, px=lease_ms):
        if time.monotonic() > deadline:
            raise TimeoutError("the replication state is locked by another task")
        time.sleep(POLL_S)
    lease = Lease(lock_key, token, lease_ms)
    threading.Thread(target=lease.renew_until_released, name="hot-state-lease",
                     daemon=True).start()
    return lease


@contextmanager
def held(wait_s: float) -> Iterator[Lease]:
    lease = acquire(wait_s)
    token = _current.set(lease)
    try:
        yield lease
    finally:
        _current.reset(token)
        lease.release()


def holding() -> bool:
    return _current.get() is not None


def fenced_write(ops: Sequence[WriteOp]) -> None:
    """Apply ``ops`` in one transaction, only if the current lease still holds the lock."""
    lease = _current.get()
    if lease is None:
        raise RuntimeError("hot-state writes need the lease (run them inside run_locked)")
    if not ops:
        return
    if lease.lost:  # a renewal already found another holder's token
        raise LeaseLost("the replication lease was lost; this write was refused")
    with lease.writing, client().pipeline(transaction=True) as pipe:
        try:
            pipe.watch(lease.lock_key)
            if pipe.get(lease.lock_key) != lease.token.encode():
                raise redis.exceptions.WatchError
            pipe.multi()
            for op in ops:
                _apply(pipe, op)
            pipe.pexpire(lease.lock_key, lease.lease_ms)
            pipe.execute()
        except redis.exceptions.WatchError:
            lease.lost = True
            raise LeaseLost("the replication lease expired and another task took it; "
                            "this write was refused") from None


def _apply(pipe: Any, op: WriteOp) -> None:
    name, k, arg = op
    if name == "set":
        pipe.set(k, arg)
    elif name == "setex":
        pipe.set(k, arg[1], ex=arg[0])
    elif name == "del":
        pipe.delete(k)
    elif name in ("sadd", "srem"):
        getattr(pipe, name)(k, arg)
    elif name == "hset" and arg:
        pipe.hset(k, mapping=arg)
    elif name == "hdel" and arg:
        pipe.hdel(k, *arg)
