"""The throttles of a plan being carried out: Cruise Control's move counts and Kafka's
byte rate (``--throttle``), what values they take, and how a change of them applies.

The counts are enforced by the replication core (``moves_to_start``, which moves may
start beside those in flight); the byte rate by a token bucket here
(``within_byte_rate``). Both are read from the execution at every executor step, so a
change made while the plan runs applies from the next step on; the bucket then refills
at the new rate and never holds more than one burst of it (``refill``).
"""
from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from typing import NamedTuple

# 1 TiB/s: past any link; keeps the value inside the column.
MAX_BYTES_PER_S = 2**40


class Throttles(NamedTuple):
    """Moves in flight per SPU and in all, and bytes a second (None: no byte throttle)."""
    max_moves_per_spu: int
    max_moves: int
    bytes_per_s: int | None


class Keep(Enum):
    """A throttle a change leaves as it is (distinct from None: no byte throttle)."""
    KEEP = "keep"


KEEP = Keep.KEEP


def throttle_problem(throttles: Throttles) -> tuple[str, str] | None:
    """(field, reason) of the first value no execution may run with, else None."""
    for name, value in (("max_moves_per_spu", throttles.max_moves_per_spu),
                        ("max_moves", throttles.max_moves)):
        if value < 1:
            return name, f"{name} must be at least 1"
    rate = throttles.bytes_per_s
    if rate is not None and not 1 <= rate <= MAX_BYTES_PER_S:
        return ("throttle_bytes_per_s", f"throttle_bytes_per_s must be 1 to {MAX_BYTES_PER_S} "
                "(bytes a second), or left out for no byte throttle")
    return None


def retuned(now: Throttles, *, max_moves_per_spu: int | Keep = KEEP,
            max_moves: int | Keep = KEEP, bytes_per_s: int | None | Keep = KEEP) -> Throttles:
    """The throttles after a change that names some of them (``KEEP`` the others)."""
    return Throttles(now.max_moves_per_spu if max_moves_per_spu is KEEP else max_moves_per_spu,
                     now.max_moves if max_moves is KEEP else max_moves,
                     now.bytes_per_s if bytes_per_s is KEEP else bytes_per_s)


# ---- the byte-rate throttle (Kafka's --throttle, Cruise Control's replication throttle) ----

# The bucket holds at most this many seconds of the rate: an idle spell buys one burst, no more.
BURST_S = 1.0


class ByteBucket(NamedTuple):
    """Bytes a plan may still start copying, as of ``at_ms``; negative while a move overdraws."""
    tokens: float
    at_ms: int


def full_bucket(rate: int, at_ms: int) -> ByteBucket:
    return ByteBucket(rate * BURST_S, at_ms)


def refill(bucket: ByteBucket, rate: int, now_ms: int) -> ByteBucket:
    """The bucket at ``now_ms``; after a change of rate it holds at most a burst of the new
    one (a lowered throttle does not let a burst of the old one through)."""
    gained = rate * max(0, now_ms - bucket.at_ms) / 1000
    return ByteBucket(min(rate * BURST_S, bucket.tokens + gained), max(now_ms, bucket.at_ms))


def within_byte_rate(sizes: Sequence[int], bucket: ByteBucket,
                     rate: int | None) -> tuple[int, ByteBucket]:
    """How many of the moves of ``sizes`` (bytes each copies), in order, may start now, and
    the bucket they leave. A move starts when the bucket holds its bytes, or holds a full
    burst: a move larger than a burst then overdraws, and the next ones wait for the debt
    to be paid, so the bytes started never run ahead of the rate by more than a burst and
    one move. Unthrottled (``rate`` None) every move may start."""
    if rate is None:
        return len(sizes), bucket
    tokens, started = bucket.tokens, 0
    for size in sizes:
        if tokens < 0 or tokens < min(size, rate * BURST_S):
            break
        tokens -= size
        started += 1
    return started, ByteBucket(tokens, bucket.at_ms)
