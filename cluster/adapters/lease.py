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

The lease is taken in turn: each waiter stands in a line ordered by its token
(``<name>:waiters``) and takes the free lock only when first, so a producer
that waits behind a tick is served before the next tick, not whenever its poll
happens to fall between two (it polled every 20 ms against ticks that took the
lock again at once; issue 36).

Leases are named: ``lock`` guards the whole hot state; with
``REPLICATION_SHARDS`` > 1 each shard has its own (``lock:shard:<i>``,
cluster/adapters/shards.py). A holder may hold several at once (``held_all``,
always taken in one global order so two holders never wait on each other),
and its writes then WATCH and check every one of them.

What a holder holds is a value (``Held``), which it passes to every fenced write it
makes (``fenced_write``) and to whatever is tagged with its token (the offsets rows):
no ambient "current leases", so a write names the leases it is fenced by, and a write
outside any holder's block has none to name.

With the hot state spread over several Redis servers (cluster/adapters/hot_servers.py)
a shard's lease lives on its shard's server, beside what it guards; its token still
comes from the one counter on the first server. A write names its server and checks the
leases held there in its transaction (``fenced_write``).
"""
from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import redis
from django.conf import settings

from cluster.adapters import hot_servers
from cluster.adapters.redis_keys import client, key

POLL_S = 0.02
# The lease that guards the whole hot state (and, when sharded, cluster-wide work).
CLUSTER_LOCK = "lock"
# A write of this many fields or more extends its leases for WRITE_GRACE_LEASES leases
# while it is packed and sent; a crashed writer then delays the next holder that long.
LARGE_WRITE = 2_000
WRITE_GRACE_LEASES = 10
# ... and one lease more for each GRACE_LEASE_FIELDS fields past that, for packing, sending
# and Redis running it, which it waits for as long (its client's socket timeout): a whole
# tick's one transaction at 1,000,000 partitions (2.1 million fields, every set new) ran
# past REDIS_SOCKET_TIMEOUT_S, and redis-py took the timeout while watching for a refusal.
GRACE_LEASE_FIELDS = 50_000
# A script's argument bytes that count as one field (``_weight``): a replica set's status
# and records entry pack to about 100 bytes in the save's script (set_records.Writes.op),
# so a script of some 1,300 sets is a large write, like a hash of LARGE_WRITE fields.
SCRIPT_FIELD_BYTES = 64

_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
"""
# The counter never goes back: a namespace adopted or made anew carries on from the store.
_RAISE_FENCE = """
local at = tonumber(redis.call('get', KEYS[1]) or '0')
if at < tonumber(ARGV[1]) then redis.call('set', KEYS[1], ARGV[1]) return 1 end
return 0
"""
# A waiter takes the lock only when it is free and the waiter is first in line (the
# lowest token); every poll renews its place, and a place not renewed for a lease (a
# waiter that died) is dropped by the next one, so a crash delays the line by one lease.
_TAKE_IN_TURN = """
local lock, line, seen, me, lease = KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2])
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('zadd', line, tonumber(me), me)
redis.call('hset', seen, me, now)
redis.call('pexpire', line, lease * 10)
redis.call('pexpire', seen, lease * 10)
while true do
  local first = redis.call('zrange', line, 0, 0)[1]
  if first == nil or first == me then break end
  if now - tonumber(redis.call('hget', seen, first) or '0') <= lease then return 0 end
  redis.call('zrem', line, first)
  redis.call('hdel', seen, first)
end
if not redis.call('set', lock, me, 'NX', 'PX', lease) then return 0 end
redis.call('zrem', line, me)
redis.call('hdel', seen, me)
return 1
"""
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""


class WriteOp(NamedTuple):
    """One write of a fenced transaction: ``set``, ``sadd``, ``srem`` (arg a value),
    ``lpush`` (arg (value, how many of the list to keep)),
    ``setex`` (arg (seconds, value)), ``del``, ``unlink``, ``hset`` (arg a mapping), ``hdel``
    (arg a list of fields) or ``eval`` (arg (script, keys, args): a script run inside
    the transaction, such as the metadata log's append)."""
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
    server: int = hot_servers.HOME  # where its lock key lives
    _stop: threading.Event = field(default_factory=threading.Event)
    # A renewal touching the lock mid-write would abort the write's transaction.
    writing: threading.Lock = field(default_factory=threading.Lock)

    def renew_until_released(self) -> None:
        # A third of the lease: two renewals may fail before another holder can step in.
        while not self._stop.wait(self.lease_ms / 3000):
            try:
                with self.writing:
                    renewed = hot_servers.client_of(self.server).eval(
                        _RENEW, 1, self.lock_key, self.token, self.lease_ms)
            except redis.exceptions.RedisError:
                continue  # a transient error skips one renewal; the next may still make it
            if not renewed:
                self.lost = True
                return

    def release(self) -> None:
        self._stop.set()
        try:
            hot_servers.client_of(self.server).eval(_RELEASE, 1, self.lock_key, self.token)
        except redis.exceptions.RedisError:
            pass  # an unreleased lease expires by itself


@dataclass(frozen=True)
class Held:
    """The leases one use case holds, in the order taken (``held_all``): what its fenced
    writes check (``fenced_write``). ``Held()`` holds none: a write under it is refused."""
    leases: tuple[Lease, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """The lock keys held, in the order taken."""
        return tuple(held.lock_key for held in self.leases)

    @property
    def token(self) -> int:
        """The newest fencing token held (0 for none). Tokens only grow, so a store
        write tagged with it loses to any later holder's."""
        return max((int(held.token) for held in self.leases), default=0)


def raise_fence(floor: int, namespace: str | None = None) -> bool:
    """Make every later token exceed ``floor`` (the store's highest ``written_by``).

    The counter lives in the namespace: a Redis that lost it (or a new namespace)
    would count from 1 again, and the store's rows, written only by a token at
    least theirs, would freeze. Returns whether the counter was behind."""
    return bool(client().eval(_RAISE_FENCE, 1, key("fence", namespace), int(floor)))


def acquire(wait_s: float, name: str = CLUSTER_LOCK) -> Lease:
    """Take the lease ``name``, waiting up to ``wait_s``; TimeoutError if another holder keeps it.

    Waiters are served in the order they came (their tokens): a producer waiting behind
    a busy tick is next once it ends, never passed by the tick after it (issue 36)."""
    lock_key = key(name)
    server = hot_servers.server_of_lock(lock_key)
    r = hot_servers.client_of(server)
    lease_ms = max(100, int(settings.REPLICATION_LOCK_LEASE_S * 1000))
    token = str(client().incr(key("fence")))
    queue = (lock_key, key(f"{name}:waiters"), key(f"{name}:waiting"))
    deadline = time.monotonic() + wait_s
    try:
        while not r.eval(_TAKE_IN_TURN, 3, *queue, token, lease_ms):
            if time.monotonic() > deadline:
                raise TimeoutError("the replication state is locked by another task")
            time.sleep(POLL_S)
    except BaseException:
        _leave_queue(r, queue, token)
        raise
    lease = Lease(lock_key, token, lease_ms, server=server)
    threading.Thread(target=lease.renew_until_released, name="hot-state-lease",
                     daemon=True).start()
    return lease


def _leave_queue(r: redis.Redis, queue: tuple[str, str, str], token: str) -> None:
    """A waiter that gives up leaves its place at once rather than after a lease."""
    try:
        pipe = r.pipeline(transaction=True)
        pipe.zrem(queue[1], token)
        pipe.hdel(queue[2], token)
        pipe.execute()
    except redis.exceptions.RedisError:
        pass  # its place lapses by itself: it stops renewing it


def waiting(name: str = CLUSTER_LOCK) -> int:
    """How many holders wait for the lease ``name`` (its queue's length)."""
    waiters = key(f"{name}:waiters")
    return int(hot_servers.client_of(hot_servers.server_of_lock(waiters)).zcard(waiters))


@contextmanager
def held(wait_s: float, name: str = CLUSTER_LOCK) -> Iterator[Lease]:
    """The one lease ``name`` (its writes name it as ``Held((lease,))``)."""
    with held_all(wait_s, [name]) as taken:
        yield taken.leases[0]


@contextmanager
def held_all(wait_s: float, names: Sequence[str]) -> Iterator[Held]:
    """Hold every lease of ``names``, taken in the order given, within ``wait_s`` in all.

    Callers pass them in one global order (the cluster lease, then shards by
    number): holders that need several can then never wait on each other.
    """
    deadline = time.monotonic() + wait_s
    leases: list[Lease] = []
    try:
        for name in names:
            leases.append(acquire(max(0.0, deadline - time.monotonic()), name))
        yield Held(tuple(leases))
    finally:
        for taken in reversed(leases):
            taken.release()


def fenced_write(held: Held, ops: Sequence[WriteOp], server: int = hot_servers.HOME
                 ) -> list[Any]:
    """Apply ``ops`` in one transaction on ``server``, only if every lease of ``held``
    there still holds its lock (one server: every lease held); Redis's replies to the
    commands ``ops`` sent, in order (an empty hash write sends none)."""
    every = held.leases
    if not every:
        raise RuntimeError("hot-state writes need the lease (a unit of work's, or held_all's)")
    if not ops:
        return []
    if any(taken.lost for taken in every):  # a renewal already found another holder's token
        raise LeaseLost("the replication lease was lost; this write was refused")
    leases = [taken for taken in every if taken.server == server]
    if len(leases) < len(every):
        _check_elsewhere([taken for taken in every if taken.server != server])
    with ExitStack() as stack:
        for taken in leases:
            stack.enter_context(taken.writing)
        weight = _weight(ops)
        patience = _extend_for_write(leases, weight) if weight >= LARGE_WRITE else None
        pipe = stack.enter_context(hot_servers.client_of(server, patience).pipeline(
            transaction=True))
        try:
            if leases:
                pipe.watch(*[taken.lock_key for taken in leases])
            if any(pipe.get(taken.lock_key) != taken.token.encode() for taken in leases):
                raise redis.exceptions.WatchError
            pipe.multi()
            for op in ops:
                _apply(pipe, op)
            for taken in leases:
                pipe.pexpire(taken.lock_key, taken.lease_ms)
            replies = pipe.execute()
            return list(replies[:len(replies) - len(leases)])  # less the PEXPIREs
        except redis.exceptions.WatchError:
            for taken in leases:
                taken.lost = True
            raise LeaseLost("the replication lease expired and another task took it; "
                            "this write was refused") from None


def _check_elsewhere(leases: Sequence[Lease]) -> None:
    """The leases held on other servers than a write's: read just before it, since its
    transaction cannot watch them (a spread unit commits its shard's sets first, on their
    server, in a transaction that does; what follows on the first server is checked so)."""
    for held in leases:
        if hot_servers.client_of(held.server).get(held.lock_key) != held.token.encode():
            held.lost = True
            raise LeaseLost("the replication lease expired and another task took it; "
                            "this write was refused")


def _weight(ops: Sequence[WriteOp]) -> int:
    """About how many fields a write sends: a hash's mapping or a list counts its items, a
    script one a SCRIPT_FIELD_BYTES of its arguments (a save's statuses and records travel
    packed in one: set_records.Writes.op)."""
    return sum(len(op.arg) if isinstance(op.arg, (dict, list)) else
               _script_bytes(op.arg[2]) // SCRIPT_FIELD_BYTES if op.op == "eval" else 1
               for op in ops)


def _script_bytes(args: Sequence[Any]) -> int:
    return sum(len(a) for a in args if isinstance(a, (str, bytes)))


def _extend_for_write(leases: Sequence[Lease], weight: int) -> float:
    """Give a large write of ``weight`` fields WRITE_GRACE_LEASES leases or more (one more
    each GRACE_LEASE_FIELDS past LARGE_WRITE) to be packed, sent and run; return how long
    the write waits for Redis's answer: that grace in seconds, at least.

    The renewal waits on the write (touching the watched lock would abort it), so a write
    that took longer than one lease to send (a 100,000-partition tick on a loaded machine)
    found its own lock expired and was refused though nobody else held it. The extension
    is token-checked like a renewal, and the write's transaction sets the lease back."""
    leases_of_grace = WRITE_GRACE_LEASES + max(0, weight - LARGE_WRITE) // GRACE_LEASE_FIELDS
    lease_ms = max(100, int(settings.REPLICATION_LOCK_LEASE_S * 1000))
    for held in leases:
        grace = held.lease_ms * leases_of_grace
        lease_ms = max(lease_ms, held.lease_ms)
        if not hot_servers.client_of(held.server).eval(_RENEW, 1, held.lock_key, held.token,
                                                       grace):
            held.lost = True
            raise LeaseLost("the replication lease expired and another task took it; "
                            "this write was refused")
    seconds = max(lease_ms * leases_of_grace / 1000, float(settings.REDIS_SOCKET_TIMEOUT_S))
    # Rounded up to a power of two: each timeout is a client of its own (and its pool).
    return float(2 ** math.ceil(math.log2(seconds)))


def _apply(pipe: Any, op: WriteOp) -> None:
    name, k, arg = op
    if name == "set":
        pipe.set(k, arg)
    elif name == "setex":
        pipe.set(k, arg[1], ex=arg[0])
    elif name == "del":
        pipe.delete(k)
    elif name == "unlink":  # freed off Redis's main thread: a large hash's delete
        pipe.unlink(k)
    elif name == "lpush":  # arg (value, how many to keep): the newest first
        pipe.lpush(k, arg[0])
        pipe.ltrim(k, 0, arg[1] - 1)
    elif name in ("sadd", "srem"):
        getattr(pipe, name)(k, arg)
    elif name == "hset" and arg:
        pipe.hset(k, mapping=arg)
    elif name == "hdel" and arg:
        pipe.hdel(k, *arg)
    elif name == "eval":
        script, keys, args = arg
        pipe.eval(script, len(keys), *keys, *args)
