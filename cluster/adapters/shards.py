"""Shards of the SPU loops (``REPLICATION_SHARDS`` > 1): which partition goes where, and
which leases a use case takes.

Partitions go to shards by blocks of ``cluster.live.BLOCK`` (the live page
groups): block ``b`` of a topic belongs to shard ``(crc32(topic) + b) mod N``.
Every process computes the same answer without asking anyone; a large topic's
blocks take the shards in turn, and small topics spread by their name's hash.
Whole blocks, not single partitions: a shard task then publishes its own live
groups only, where hashing single partitions made every shard stage every
group (four times the live updates' Redis round trips at four shards). Each shard has its own fenced lease (``lock:shard:<i>``,
cluster/adapters/lease.py); the cluster lease (``lock``) stays the one that
guards cluster-wide work. The exclusion scheme, chosen as the simplest that
is correct:

* a shard task holds its shard's lease, loads only that shard's replica sets
  and saves only them (never the meta: SPU status, topic settings and the
  producers' table belong to the coordinator);
* a use case on a few partitions (produce, candidate notices, election
  timers) holds the leases of their shards, in shard order;
* anything that changes replica sets across the cluster (topology sync, an
  SPU going offline or online, the connection manager dropping an SPU, a plan
  executor step, recovery of a lost hot state, a command's in-process tick)
  holds *every* lease: the cluster lease first, then each shard's in order.
  It therefore never overlaps a shard task, and one global order means no two
  holders wait on each other;
* the coordinator's quiet tick (nothing cluster-wide to change) holds only the
  cluster lease and writes only the meta, which shard tasks read but never write.

Record ids are handed out in blocks from one Redis counter (``record_ids``),
raised first to the meta's ``next_record_id``: shard tasks produce at the same
time without sharing the meta, and ids stay unique however the shard count
changes between runs. A block reserved by a task that then died is skipped.
"""
from __future__ import annotations

import zlib
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from django.conf import settings

from cluster.adapters import hot_servers
from cluster.adapters.lease import CLUSTER_LOCK, WriteOp
from cluster.adapters.redis_keys import client, key
from cluster.core.replication import ClusterState, Key
from cluster.live import BLOCK

RECORD_IDS = "record_ids"
# Raise the counter to the caller's floor, then hand out ``count`` ids from it: one round trip.
_RESERVE = """
local current = tonumber(redis.call('get', KEYS[1]) or '0')
local floor = tonumber(ARGV[1])
if current < floor then current = floor end
redis.call('set', KEYS[1], current + tonumber(ARGV[2]))
return current
"""


def count() -> int:
    return int(settings.REPLICATION_SHARDS)


def sharded() -> bool:
    return count() > 1


def shard_of(partition: Key, shards: int) -> int:
    """Stable across processes and runs (unlike ``hash``, which is salted per process)."""
    topic, index = partition
    return (_topic_hash(topic) + index // BLOCK) % shards


def server_of(partition: Key) -> int:
    """The Redis server of a partition's replica set and records (hot_servers.py)."""
    if not hot_servers.spread():
        return hot_servers.HOME
    return hot_servers.server_of_shard(shard_of(partition, count()))


@lru_cache(maxsize=4096)
def _topic_hash(topic: str) -> int:
    return zlib.crc32(topic.encode())


def lock_name(shard: int) -> str:
    return f"lock:shard:{shard}"


def every_lock() -> list[str]:
    """The leases of a use case that changes the whole state, in the global order."""
    return [CLUSTER_LOCK, *(lock_name(i) for i in range(count()))] if sharded() else [CLUSTER_LOCK]


def locks_of(partitions: Iterable[Key]) -> list[str]:
    """The leases of the shards these partitions belong to, in the global order."""
    n = count()
    return [lock_name(i) for i in sorted({shard_of(p, n) for p in partitions})]


def keys_of_shard(topics: dict[str, Any], shard: int, shards: int) -> list[Key]:
    """The replicated partitions of one shard (the shell's topic table names every partition)."""
    out: list[Key] = []
    for name, table in topics.items():
        count, first = len(table["partitions"]), (shard - _topic_hash(name)) % shards
        for block in range(first, -(-count // BLOCK), shards):
            out += [(name, i) for i in range(block * BLOCK, min(count, (block + 1) * BLOCK))]
    return out


def reserve_record_ids(n: int, floor: int) -> int:
    """The first of ``n`` fresh record ids, none below ``floor`` (the loaded meta's next id)."""
    return int(client().eval(_RESERVE, 1, key(RECORD_IDS), floor, n))


def record_ids_floor_op(next_id: int) -> WriteOp:
    """The write (inside a fenced transaction) that keeps the counter at ``next_id`` or
    above: a save in pieces lands its records before the meta that counts them."""
    return WriteOp("eval", key(RECORD_IDS), (_RESERVE, [key(RECORD_IDS)], [next_id, 0]))


def adopt_record_ids(state: ClusterState) -> None:
    """A whole-state holder continues above every id the shards handed out."""
    handed_out = client().get(key(RECORD_IDS))
    if handed_out is not None:
        state.next_record_id = max(state.next_record_id, int(handed_out))
