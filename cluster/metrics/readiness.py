"""Readiness: the database, Redis, a live worker heartbeat and an engine whose ticks
commit (cluster/services/tick_health.py), each checked and named."""
from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict

import redis
from django.conf import settings
from django.db import DatabaseError, connection

from cluster.adapters import hot_state, redis_keys
from cluster.services import tick_health

TIMEOUT_S = 1.0


class Check(TypedDict):
    ok: bool
    error: str | None


class Readiness(TypedDict):
    ready: bool
    checks: dict[str, Check]
    failing: list[str]


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _redis_client(url: str | None = None) -> redis.Redis:
    # Its own short timeouts: a probe must answer before the orchestrator gives up.
    return redis.Redis.from_url(url or settings.REDIS_URL, socket_timeout=TIMEOUT_S,
                                socket_connect_timeout=TIMEOUT_S)


def _redis() -> None:
    """The broker's Redis and every hot-state server (HOT_STATE_REDIS_URLS)."""
    for url in dict.fromkeys([settings.REDIS_URL, *settings.HOT_STATE_REDIS_URLS]):
        with _redis_client(url) as client:
            client.ping()
            refusal = _write_refusal(client)
        if refusal:
            raise LookupError(refusal)


def _write_refusal(client: redis.Redis) -> str | None:
    """Why a Redis that answers refuses writes, if it does: full under ``noeviction``. It
    then also refuses the broker's messages, so no tick runs to record an error of its own."""
    try:
        memory = client.info("memory")
    except redis.exceptions.ResponseError:
        return None  # INFO renamed away (a managed Redis): nothing to tell
    limit, used = int(memory.get("maxmemory", 0)), int(memory.get("used_memory", 0))
    if limit and used >= limit and memory.get("maxmemory_policy") == "noeviction":
        return (f"Redis refuses writes: used memory {used} bytes has reached maxmemory "
                f"{limit} bytes (maxmemory-policy noeviction)")
    return None


def _worker() -> None:
    with _redis_client(redis_keys.home_url()) as client:  # the hot state's first server
        if not client.exists(hot_state.WORKER):
            raise LookupError(f"no worker has refreshed {hot_state.WORKER} "
                              f"in the last {settings.REPLICATION_WORKER_TTL_S} s")


def _engine() -> None:
    stalled = tick_health.stall()
    if stalled is not None:
        raise LookupError(stalled.message)


CHECKS: dict[str, Callable[[], None]] = {"database": _database, "redis": _redis,
                                         "worker": _worker, "engine": _engine}


def readiness() -> Readiness:
    checks = {name: _run(check) for name, check in CHECKS.items()}
    failing = [name for name, c in checks.items() if not c["ok"]]
    return Readiness(ready=not failing, checks=checks, failing=failing)


def _run(check: Callable[[], None]) -> Check:
    try:
        check()
    except (DatabaseError, redis.exceptions.RedisError, LookupError) as exc:
        return Check(ok=False, error=str(exc) or type(exc).__name__)
    return Check(ok=True, error=None)
