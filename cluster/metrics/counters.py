"""Counters and the tick histogram, held in Redis so every process adds to one figure.

One hash, ``repl:{<store id>}:metrics``, beside the replication state: it shares that
state's lifetime (a store that claims Redis anew starts from zero, which
Prometheus reads as a counter reset). Increments of a step are buffered in
the process and written in one pipeline after the step is saved, so the
simulated producers of a 100,000-partition tick cost one round trip, not one
per partition.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from typing import NamedTuple

import redis

from cluster.adapters import hot_state, redis_keys


def _key(namespace: str | None = None) -> str:
    """In the store's namespace, beside its replication state (cluster/adapters/redis_keys.py).
    Made once per write: outside a use case's binding each resolution reads the store id."""
    return redis_keys.key("metrics", namespace)


TICK_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
INF = "+Inf"


class Histogram(NamedTuple):
    """The hash fields of one histogram: a count per bucket (upper bound), a count, a sum."""
    bucket: str
    count: str
    sum: str


TICK = Histogram("tick_le:", "tick_count", "tick_sum")
# With REPLICATION_SHARDS > 1 each tick also runs one task per shard: timed apart, so the
# tick histogram still counts one observation per tick.
SHARD_TICK = Histogram("shard_tick_le:", "shard_tick_count", "shard_tick_sum")

log = logging.getLogger(__name__)
_pending: Counter[str] = Counter()
_pending_lock = threading.Lock()


def buffer(increments: Mapping[str, int]) -> None:
    """Hold increments until the step that made them is saved (``flush``)."""
    with _pending_lock:
        _pending.update(increments)


def flush(extra: Mapping[str, int] | None = None, *, namespace: str | None = None) -> None:
    """Write buffered increments (and ``extra``) in one pipeline; never fail the caller.
    ``namespace``: the store's, when the caller has it (a unit of work's)."""
    with _pending_lock:
        increments = +(_pending + Counter(extra or {}))
        _pending.clear()
    if increments:
        _write(increments, {}, namespace)


def _write(increments: Mapping[str, int], floats: Mapping[str, float],
           namespace: str | None = None) -> None:
    try:
        metrics = _key(namespace)
        pipe = hot_state.client().pipeline(transaction=False)
        for name, n in increments.items():
            pipe.hincrby(metrics, name, n)
        for name, x in floats.items():
            pipe.hincrbyfloat(metrics, name, x)
        pipe.execute()
    except redis.exceptions.RedisError:
        # A metric lost while Redis is away must not turn a stored change into an error.
        log.warning("metrics counters not written", exc_info=True)


def tick_bucket(seconds: float) -> str:
    """The histogram bucket (upper bound) a tick's duration falls into."""
    return next((str(b) for b in TICK_BUCKETS if seconds <= b), INF)


def observe(histogram: Histogram, seconds: float) -> None:
    _write({histogram.bucket + tick_bucket(seconds): 1, histogram.count: 1},
           {histogram.sum: seconds})


_timing = threading.local()  # the histograms this thread is timing right now


@contextmanager
def timed_tick(histogram: Histogram = TICK) -> Iterator[None]:
    """Time a replication tick; one that raised is not observed, nor are its buffered counts.

    Nested timing of one histogram in one thread observes once, the outermost: a
    sharded coordinator that runs the whole tick itself is still one tick.
    """
    active: set[Histogram] = _timing.__dict__.setdefault("active", set())
    if histogram in active:
        yield
        return
    start = time.perf_counter()
    active.add(histogram)
    try:
        yield
    except BaseException:
        discard()
        raise
    finally:
        active.discard(histogram)
    observe(histogram, time.perf_counter() - start)


def timed_shard_tick() -> AbstractContextManager[None]:
    """Time one shard's part of a sharded tick (its own histogram, see SHARD_TICK)."""
    return timed_tick(SHARD_TICK)


def discard() -> None:
    """Drop buffered increments of a step that was not saved."""
    with _pending_lock:
        _pending.clear()


def read() -> dict[str, float]:
    """Every counter field; raises RedisError when Redis is unreachable."""
    raw = hot_state.client().hgetall(_key())
    return {k.decode(): float(v) for k, v in raw.items()}
