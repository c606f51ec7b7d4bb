"""Which Redis server holds which part of the hot state (``HOT_STATE_REDIS_URLS``).

With one server (the default: the list empty, or ``REPLICATION_SHARDS`` 1) every key is
on the first: ``redis_keys.client()``, nothing changes. Spread (two URLs or more and
shards): shard ``s`` lives on server ``s mod n`` (``server_of_shard``), whole: its
replica sets (the fields of ``sets:<topic>`` for its partitions: each server holds the
same hash name with its own shards' fields), their records (``recs:<topic>:<p>``), its
lease and the lease's waiting line (``lock:shard:<s>``), and its sets' generation
(``lock:shard:<s>:sets-gen``). A shard's fenced save is then one transaction on one
server, checking the lease that lives beside what it writes.

Everything else stays on the first server: the cluster lease, the fencing-token counter
(tokens tag the store's rows, so they must come from one counter to compare), the meta,
the metadata log, the store identity, the record-id counter, values, tickets, SPU loops'
heartbeats, shard owners. Why a list of URLs and not Redis Cluster with hash tags: it
needs no cluster set-up (any redis-server will do, `make run` starts private ones), the
placement is visible in one line of arithmetic, and a shard's keys are already one
shard's, so a cluster's resharding would buy nothing. (docs/engine-throughput.md, "Hot
state on several Redis servers".)
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import redis
from django.conf import settings

from cluster.adapters.redis_keys import client_at, home_url

HOME = 0  # the first server: the cluster lease, the meta, the log, the counters
_SHARD_LOCK = re.compile(r":lock:shard:(\d+)(?::|$)")
T = TypeVar("T")


def count() -> int:
    """How many servers hold the hot state."""
    return max(1, len(settings.HOT_STATE_REDIS_URLS))


def spread() -> bool:
    """Shards live on several servers (else everything is on the first)."""
    return count() > 1 and int(settings.REPLICATION_SHARDS) > 1


def server_of_shard(shard: int) -> int:
    return shard % count() if spread() else HOME


def servers() -> range:
    return range(count() if spread() else 1)


def client_of(server: int, socket_timeout: float | None = None) -> redis.Redis:
    """The client of ``server``; ``socket_timeout``: one that waits that long for an answer."""
    url = home_url() if server == HOME else settings.HOT_STATE_REDIS_URLS[server]
    return client_at(url, socket_timeout)


def server_of_lock(lock_key: str) -> int:
    """The server of a lease's keys (``repl:{…}:lock:shard:<s>`` and its suffixes);
    the cluster lease and every other key: the first."""
    found = _SHARD_LOCK.search(lock_key)
    return server_of_shard(int(found.group(1))) if found else HOME


def grouped(items: Iterable[T], server_of: Callable[[T], int]) -> dict[int, list[T]]:
    """``items`` by server, each group in the order given."""
    out: dict[int, list[T]] = {}
    for item in items:
        out.setdefault(server_of(item), []).append(item)
    return out


def get_each(keys: list[str], server_of: Callable[[str], int] = server_of_lock) -> list[Any]:
    """GET each key from its server (a lease's keys: its lease's), one round trip a server."""
    found: dict[str, Any] = {}
    for server, group in grouped(keys, server_of).items():
        pipe = client_of(server).pipeline(transaction=False)
        for k in group:
            pipe.get(k)
        found.update(zip(group, pipe.execute()))
    return [found[k] for k in keys]


def run_ids() -> str:
    """Every server's run id (one changes whenever its server restarts): a restart of any
    of them sends the next tick to check the hot state against the store."""
    return "|".join(str(client_of(s).info("server")["run_id"]) for s in servers())
