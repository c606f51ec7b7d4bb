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
* a save that changed some sets' replicas there (a move started or ended, a set made)
  patches the fields of the SPUs they left or joined, read under its leases, and carries
  the marker with them (``_patches``);
* a save that loaded the whole shard (a shard's tick, a whole tick) writes the shard's
  index again from its sets, with the marker, when its index was not exact, or a topic
  was dropped;
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
    ``token``, the marker carried, the fields of the SPUs its changed sets left or joined
    patched, or the shard's index written again, or nothing."""
    if not shards.sharded():
        return {}
    n = shards.count()
    every = key(CLUSTER_LOCK) in hot.scope
    touched: dict[int, list[Key]] = {}
    for set_key in hot.state.replicas_touched:
        touched.setdefault(shards.shard_of(set_key, n), []).append(set_key)
    carried, patched, rewritten = [], {}, []
    for shard in range(n):
        lock_key = key(shards.lock_name(shard))
        if not every and lock_key not in hot.scope:
            continue  # this save does not move that shard's generation
        exact = lock_key in hot.indexed
        if exact and not hot.dropped and shard not in touched:
            carried.append(shard)
        elif exact and not hot.dropped:
            patched[shard] = touched[shard]
        elif hot.complete:  # every set of the shard loaded: its index can be written again
            rewritten.append(shard)
    members = _members(hot, set(rewritten), n) if rewritten else {}
    patches = _patches(hot, patched) if patched else {}
    out: dict[int, list[WriteOp]] = {}
    for shard in sorted([*carried, *patched, *rewritten]):
        lock_key = key(shards.lock_name(shard))
        written = patches.get(shard, [])
        if shard in rewritten:
            written = [WriteOp("del", index_key(lock_key))]
            if members.get(shard):
                written.append(WriteOp("hset", index_key(lock_key), {
                    str(spu): msgpack.packb(parts) for spu, parts in members[shard].items()}))
        out.setdefault(hot_servers.server_of_lock(lock_key), []).extend(
            [*written, WriteOp("set", marker_key(lock_key), _mark(token, n))])
    return out


def _patches(hot: HotState, patched: dict[int, list[Key]]) -> dict[int, list[WriteOp]]:
    """The writes that bring each shard's exact index up to its changed sets: the fields of
    the SPUs a set left or joined, read (the save's leases keep every other writer of them
    away), the set taken out of or put in, and written back (dropped when emptied).

    A plan's moves touch a few sets of some shards at every tick; writing each such shard's
    index again from all its sets took 73 ms a shard at 100,000 partitions over 4 shards
    (the shard's next tick did it, its marker left behind by the unit of the moves alone)."""
    changes: dict[int, dict[int, list[tuple[Key, bool]]]] = {}  # shard -> SPU -> (set, joins)
    for shard, keys in patched.items():
        by_spu = changes[shard] = {}
        for set_key in keys:
            before = hot.before.get(set_key)
            old = {s for s, _, _ in before.replicas} if before is not None else set()
            rs = hot.state.replica_sets.get(set_key)
            new = set(rs.replicas) if rs is not None else set()
            for spu in old ^ new:
                by_spu.setdefault(spu, []).append((set_key, spu in new))
    locks = {shard: key(shards.lock_name(shard)) for shard in changes}
    asked = [(shard, sorted(by_spu)) for shard, by_spu in changes.items() if by_spu]
    stored: dict[int, list[Any]] = {}
    for server, group in hot_servers.grouped(
            asked, lambda a: hot_servers.server_of_lock(locks[a[0]])).items():
        pipe = hot_servers.client_of(server).pipeline(transaction=False)
        for shard, spus in group:
            pipe.hmget(index_key(locks[shard]), [str(s) for s in spus])
        stored.update((shard, found) for (shard, _), found in zip(group, pipe.execute()))
    out: dict[int, list[WriteOp]] = {}
    for shard, spus in asked:
        fields, emptied = {}, []
        for spu, data in zip(spus, stored[shard]):
            parts: dict[str, list[int]] = msgpack.unpackb(data) if data is not None else {}
            for (topic, partition), joins in changes[shard][spu]:
                listed = parts.setdefault(topic, [])
                if joins and partition not in listed:
                    listed.append(partition)
                elif not joins and partition in listed:
                    listed.remove(partition)
                if not listed:
                    del parts[topic]
            if parts:
                fields[str(spu)] = msgpack.packb(parts)
            else:
                emptied.append(str(spu))
        written = [WriteOp("hset", index_key(locks[shard]), fields)] if fields else []
        if emptied:
            written.append(WriteOp("hdel", index_key(locks[shard]), emptied))
        out[shard] = written
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
