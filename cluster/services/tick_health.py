"""The engine's pulse: ticks that committed, ticks that failed, and whether it stalled.

A stalled engine was invisible (issue 35): every tick raised, /readyz said ready and
every page said "live". The workers' task shell (cluster/tasks.py) now notes each
tick's outcome: a commit as a time in Redis (one SET a tick, no database write), a
failure in the database's TickHealth row (a count, the failures in a row, the last
error), since a Redis that refuses writes is one way for ticks to fail. /readyz, /metrics
and the pages' banner read both.

The engine has stalled when no tick committed for REPLICATION_STALL_S, or the last
REPLICATION_STALL_FAILURES ticks failed.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime

import redis
from django.conf import settings
from django.db import DatabaseError, transaction

from cluster.adapters import redis_keys
from cluster.models import TickHealth

log = logging.getLogger(__name__)
LAST_COMMIT = "tick-committed"  # in the store's namespace: repl:{<store id>}:tick-committed
ERROR_CHARS = 500
# No tick ran to fail: beat cannot send one (Redis, its broker, refuses writes?) or no
# worker takes it.
NO_ERROR = "none recorded: no tick ran (see the other checks, and the worker and beat logs)"


@dataclass(frozen=True)
class Stall:
    """Why the engine counts as stalled; ``since`` is the last commit (None: none yet)."""
    since: datetime | None
    failed_in_a_row: int
    last_error: str
    message: str


def tick_committed(now_ms: int | None = None) -> None:
    """Note a tick that committed; a Redis that refuses it leaves the last one standing."""
    at = now_ms if now_ms is not None else _now_ms()
    try:
        redis_keys.client().set(redis_keys.key(LAST_COMMIT), at)
    except (redis.exceptions.RedisError, DatabaseError):  # the key names the store: a read
        log.warning("could not note the committed tick", exc_info=True)


def tick_failed(exc: BaseException) -> None:
    """Count a tick that raised ``exc`` (never raises: the tick's own error matters more)."""
    error = (f"{type(exc).__name__}: {exc}".splitlines() or [""])[0][:ERROR_CHARS]
    try:
        last_commit = last_commit_ms()
    except (redis.exceptions.RedisError, DatabaseError):
        last_commit = None  # unknown: count it into the current run of failures
    now = datetime.now(UTC)
    try:
        with transaction.atomic():
            row, _ = TickHealth.objects.select_for_update().get_or_create(
                pk=TickHealth.SINGLETON)
            after_commit = row.last_failure_at is None or (
                last_commit is not None and last_commit > _ms(row.last_failure_at))
            row.streak = 1 if after_commit else row.streak + 1
            row.failures += 1
            row.last_failure_at, row.last_error = now, error
            row.save()
    except DatabaseError:
        log.warning("could not record the failed tick (%s)", error, exc_info=True)


def last_commit_ms() -> int | None:
    """When a tick last committed (ms since the epoch); raises RedisError."""
    raw = redis_keys.client().get(redis_keys.key(LAST_COMMIT))
    return int(raw) if raw is not None else None


def failures_total() -> int:
    return TickHealth.objects.filter(pk=TickHealth.SINGLETON).values_list(
        "failures", flat=True).first() or 0


def stall(now_ms: int | None = None) -> Stall | None:
    """None while ticks commit; raises RedisError when Redis cannot be read."""
    now = now_ms if now_ms is not None else _now_ms()
    last_commit = last_commit_ms()
    row = TickHealth.objects.filter(pk=TickHealth.SINGLETON).first()
    failing = row is not None and row.last_failure_at is not None and (
        last_commit is None or _ms(row.last_failure_at) > last_commit)
    in_a_row = row.streak if failing else 0
    error = row.last_error if failing else ""
    quiet_s = None if last_commit is None else (now - last_commit) / 1000
    if in_a_row < settings.REPLICATION_STALL_FAILURES and (
            quiet_s is not None and quiet_s <= settings.REPLICATION_STALL_S):
        return None
    since = None if last_commit is None else datetime.fromtimestamp(last_commit / 1000, UTC)
    when = (f"no tick has committed for {quiet_s:.0f} s (since {since:%Y-%m-%d %H:%M:%S} UTC)"
            if since else "no tick has committed yet")
    return Stall(since, in_a_row, error, (
        f"replication engine stalled: {when}; {in_a_row} failed in a row; last error: "
        f"{error or NO_ERROR}"))


def _now_ms() -> int:
    return int(time.time() * 1000)


def _ms(at: datetime) -> int:
    return int(at.timestamp() * 1000)
