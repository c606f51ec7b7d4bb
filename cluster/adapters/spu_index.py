"""Each shard's sets by SPU, stored beside its lease, to find an SPU's sets without reading
every set (engine/controllers.adopt_alone: an SPU changing status loads only those).

Finding them from the stored statuses (set_loading.keys_holding's scan) reads every set's
status: 0.45 s at 100,000 partitions, so some seconds at a million, at every SPU going
offline or coming back. With ``REPLICATION_SHARDS`` > 1 each shard keeps instead, on the
server of its lease:
* ``<lock>:spu-sets``: a hash, field = SPU id, value = the keys of the shard's sets with a
  replica there (msgpack: topic -> partitions);
* ``<lock>:spu-sets-gen``: the sets' generation (set_cache.generation_key) at which that
  hash was exact, and the shard count it was made under.

**Trusted only at its own generation.** Every save of sets writes a fresh generation to
each lease it holds (hot_save._generation_ops), so a writer that knows nothing of this
index (or a save that fell half-way between pieces) leaves the marker behind the
generation, and the index is not used: ``find`` answers None and the caller scans. A save
writes the marker only in the same transaction as the generation it names:
* a save that changed no replicas in a shard whose index was exact at its load carries
  the marker to its own token (most saves: a tick, a produce, an SPU's change);
* a save that loaded the whole shard (a shard's tick, a whole tick) writes the shard's
  index again from its sets, with the marker, when its index was not exact or the unit
  changed replicas there (a set made or dropped, a move started or ended:
  ``ClusterState.replicas_touched``);
* any other save leaves it behind: a shard's next tick writes it again.
"""
from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import Any

import msgpack

from cluster.adapters import hot_servers, set_cache, shards
from cluster.adapters.hot_types import HotState
from cluster.adapters.lease import CLUSTER_LOCK, WriteOp
from cluster.adapters.redis_keys import key
from cluster.core.replication import Key


def index_key(lock_key: str) -> str:
    return f"{lock_key}:spu-sets"


def marker_key(lock_key: str) -> str:
    return f"{lock_key}:spu-sets-gen"


def ops(hot: HotState, token: str) -> dict[int, list[WriteOp]]:
    """A save's writes of the index, by server: for each shard whose generation it moves to
    ``token``, the marker carried, or the shard's index written again, or nothing."""
    if not shards.sharded():
        return {}
    n = shards.count()
    every = key(CLUSTER_LOCK) in hot.scope
    touched = ({shards.shard_of(k, n) for k in hot.state.replicas_touched}
               if not hot.dropped else set(range(n)))  # a topic dropped: every shard's
    carried, rewritten = [], []
    for shard in range(n):
        lock_key = key(shards.lock_name(shard))
        if not every and lock_key not in hot.scope:
            continue  # this save does not move that shard's generation
        if lock_key in hot.indexed and shard not in touched:
            carried.append(shard)
        elif hot.complete:  # every set of the shard loaded: its index can be written again
            rewritten.append(shard)
    members = _members(hot, set(rewritten), n) if rewritten else {}
    out: dict[int, list[WriteOp]] = {}
    for shard in sorted(carried + rewritten):
        lock_key = key(shards.lock_name(shard))
        written = []
        if shard in rewritten:
            written = [WriteOp("del", index_key(lock_key))]
            if members.get(shard):
                written.append(WriteOp("hset", index_key(lock_key), {
                    str(spu): msgpack.packb(parts) for spu, parts in members[shard].items()}))
        out.setdefault(hot_servers.server_of_lock(lock_key), []).extend(
            [*written, WriteOp("set", marker_key(lock_key), _mark(token, n))])
    return out


def _mark(token: str | bytes, n: int) -> bytes:
    """The marker of an index exact at generation ``token`` with ``n`` shards: an index
    made under another shard count names other sets (shards.shard_of)."""
    raw = token.encode() if isinstance(token, str) else token
    return raw + b"|" + str(n).encode()


def _members(hot: HotState, wanted: set[int], n: int) -> dict[int, dict[int, dict[str, list[int]]]]:
    """Of each shard in ``wanted``: by SPU, by topic, the partitions of its sets there."""
    out: dict[int, dict[int, dict[str, list[int]]]] = {}
    for set_key, rs in hot.state.replica_sets.items():
        shard = shards.shard_of(set_key, n)
        if shard in wanted:
            by_spu = out.setdefault(shard, {})
            for spu in rs.replicas:
                by_spu.setdefault(spu, {}).setdefault(set_key[0], []).append(set_key[1])
    return out


def exact_marks(scope: Iterable[str], markers: Iterable[Any], tokens: Iterable[Any]
                ) -> frozenset[str]:
    """The leases of ``scope`` whose index was exact as the load read them (its marker is
    the lease's generation)."""
    n = shards.count()
    return frozenset(lock for lock, mark, token in zip(scope, markers, tokens)
                     if token is not None and mark == _mark(token, n))


def find(topics: dict[str, Any], spus: Collection[int]) -> list[Key] | None:
    """The keys of the sets of ``topics`` with a replica on one of ``spus``, from every
    shard's index; None when one shard's is not exact (its marker behind its generation)."""
    n = shards.count()
    locks = [key(shards.lock_name(shard)) for shard in range(n)]
    fields = [str(s) for s in sorted(spus)]
    found: list[list[Any]] = []
    for server, group in hot_servers.grouped(locks, hot_servers.server_of_lock).items():
        pipe = hot_servers.client_of(server).pipeline(transaction=True)
        for lock_key in group:
            pipe.get(marker_key(lock_key))
            pipe.get(set_cache.generation_key(lock_key))
            pipe.hmget(index_key(lock_key), fields)
        replies = pipe.execute()
        for at in range(0, len(replies), 3):
            mark, token, packed = replies[at:at + 3]
            if token is None or mark != _mark(token, n):
                return None
            found.append(packed)
    out: set[Key] = set()
    for packed in found:
        for data in packed:
            if data is not None:
                for topic, parts in msgpack.unpackb(data).items():
                    if topic in topics:
                        out.update((topic, p) for p in parts)
    return sorted(out)
