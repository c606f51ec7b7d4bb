"""How a load of the hot state gets its replica sets: from this process's set cache when
nobody else wrote them (``take_trusted``), else read from Redis and taken from the cache
by their bytes or decoded (``fetch_full``/``fetch_some``, then ``adopt``).

Split from hot_state.py, which re-exports ``sets_key``; the ``HotState`` these fill
lives in hot_types.py.
"""
from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import Any

from cluster.adapters import (hot_servers, set_cache, set_records, shards, spu_index,
                              status_rows)
from cluster.adapters.hot_types import HotState, partition_count
from cluster.adapters.redis_keys import key, store_namespace
from cluster.adapters.set_codec import RecordsMismatch, decode_fields, status_fields, summary
from cluster.core.replication import Key
from cluster.core.replication.steady import Steady
from cluster.perf import gc_paused


def sets_key(topic: str) -> str:
    """The hash of a topic's replica sets (field: partition index, value: its status)."""
    return key(f"sets:{topic}")


def cache_scope(hot: HotState) -> set_cache.Scope:
    """The set cache's image a unit of work under ``hot``'s leases uses."""
    return hot.namespace or store_namespace(), hot.scope


def take_trusted(hot: HotState, keys: Iterable[Key] | None, cache: set_cache.SetCache
                 ) -> bool:
    """Take the sets from this process's image under the same leases, if nobody else
    wrote a set they guard since it was exact (set_cache): the whole image for a complete
    load, without reading or passing over its sets; the named sets otherwise, reading
    only those it lacks. False (nothing taken) when the image cannot be trusted."""
    scope = cache_scope(hot)
    if hot.complete:
        image = (cache.take_all(scope, hot.generation, topics=hot.topics) if keys is None
                 else cache.take_all(scope, hot.generation, keys=keys))
        if image is None or (keys is None
                             and len(image.sets) != partition_count(hot.topics)):
            # (A set taken alone by a unit that failed is missing: the rows rewritten from
            # an image without it would drop its entry, status_rows.py.)
            return False
        hot.state.replica_sets, hot.raw, hot.before, hot.stored = (
            image.sets, image.raw, image.summaries, image.stored)
        hot.state.steady, hot.rowed = image.steady, image.rowed
        hot.exact = True
        return True
    if keys is None or not cache.trusted(scope, hot.generation):
        return False
    missing = []
    with gc_paused():
        for set_key in keys:
            if set_key[0] not in hot.topics or set_key in hot.state.replica_sets:
                continue
            taken = cache.take_trusted(scope, set_key)
            if taken is None:
                missing.append(set_key)
                continue
            kept, anchored = taken
            hot.raw[set_key], rs, hot.before[set_key], hot.stored[set_key] = kept
            hot.state.replica_sets[set_key] = rs
            if anchored is not None:
                hot.rowed[set_key] = anchored
    if missing:  # a set the image lacks is one the store lacks too, unless it was dropped
        adopt(hot, fetch_some(missing, hot.topics, hot.rowed), None)
    hot.exact = True
    return True


def take_after_others(hot: HotState, cache: set_cache.SetCache,
                      keys: Iterable[Key] | None = None) -> bool:
    """A complete load (every set, or ``keys``: whole shards), when this process's image is
    not the store's only by the saves the leases' notes name since (set_cache
    ``written_since``): the image whole but for the sets those saves wrote, read and
    decoded anew; its steady index kept for the rest. False (nothing taken) when the notes
    do not lead from the image to the store (a large save noted nothing, no image), or the
    image and the sets written are not the sets the load reads. Spread over several
    servers, each lease's notes are read from its own (``_notes``).

    A shard's unit takes this way after a holder of every lease wrote a few of its sets
    (an SPU changing status: engine/controllers.adopt_alone), which notes for each shard
    what it wrote there (hot_save._noted): it read and compared every set's bytes."""
    scope = cache_scope(hot)
    since = cache.token(scope)
    if (not hot.complete or (keys is None and not hot.full) or not hot.scope
            or hot.generation is None or since is None):
        return False
    written = set_cache.written_since(_notes(hot.scope), since, hot.generation)
    if written is None:
        return False
    if keys is not None:
        wanted = set(keys)
        written &= wanted  # a whole-state holder's note names every shard's sets
        if cache.keys(scope) | written != wanted:
            return False
    taken = cache.take_behind(scope, hot.topics)
    if taken is None:
        return False
    # The written sets' old entries apart, with the index: ``adopt`` reads only the records
    # they gained since, and keeps the index for the others.
    old = set_cache.Image(token=taken.token, steady=taken.steady)
    with gc_paused():
        sets, raw, before, stored = taken.sets, taken.raw, taken.summaries, taken.stored
        for set_key in written:
            if set_key in sets:
                old.sets[set_key], old.raw[set_key] = sets.pop(set_key), raw.pop(set_key)
                old.summaries[set_key] = before.pop(set_key)
                old.stored[set_key] = stored.pop(set_key)
        hot.state.replica_sets, hot.raw, hot.before, hot.stored = sets, raw, before, stored
        hot.rowed = taken.rowed  # the written sets' anchors: told by their fetch
    adopt(hot, fetch_some(written, hot.topics, hot.rowed),
          set_cache.SetCache.holding(scope, old), read=written)
    hot.exact = True
    return True


def _notes(scope: Iterable[str]) -> list[list[bytes]]:
    """Each lease's notes (newest first), read from the lease's server: spread, a shard's
    notes live beside its generation (hot_save._noted), one round trip a server."""
    by_server = hot_servers.grouped(list(scope), hot_servers.server_of_lock)
    found: dict[str, list[bytes]] = {}
    for server, lock_keys in by_server.items():
        pipe = hot_servers.client_of(server).pipeline(transaction=False)
        for lock_key in lock_keys:
            pipe.lrange(set_cache.noted_key(lock_key), 0, -1)
        found.update(zip(lock_keys, pipe.execute()))
    return [found[lock_key] for lock_key in scope]


def adopt(hot: HotState, fetched: list[tuple[Key, bytes]],
          committed: set_cache.SetCache | None, *, read: Iterable[Key] | None = None) -> None:
    """Put the fetched sets in ``hot``: taken from the set cache ``committed`` (a unit of
    work's; None: a reader's) when their bytes are the ones this process committed, else
    decoded with their records.

    A complete load (every set the leases guard) keeps the image's steady index for the
    sets it takes by their bytes: they are the very sets this process committed, so they
    are as steady as they were, and their encodings' templates still hold. Without that,
    one write by another process (a produce from the web) left every set to join the
    index again and its template to be built again, at the next tick: 0.2 s of a busy
    10,000-partition tick. (The index's own checks, at the next round, still drop the
    sets of an SPU whose status or loop changed, and all of them under a cut.)

    ``read``: the keys whose sets were read (None: every set the leases guard; the others
    are in ``hot`` already, from the image)."""
    state, stored = hot.state, hot.stored
    scope = cache_scope(hot)
    index = committed.take_index(scope) if committed is not None and hot.complete else None
    with gc_paused():
        taken, missed = {}, []
        for set_key, data in fetched:
            kept = known = None
            if committed is not None:
                kept, known = committed.take(scope, set_key, data, hot.rowed.get(set_key))
            if kept is None:
                missed.append((set_key, status_fields(data), known))
            else:
                taken[set_key] = kept
        records = fetch_records(missed)
        damaged: list[tuple[str, int, str]] = []
        for set_key, fields, _ in missed:
            try:
                rs, apart = decode_fields(fields, records[set_key])
            except RecordsMismatch as exc:  # every damaged set named, not only the first
                damaged += exc.partitions
                continue
            taken[set_key] = rs, summary(rs), set_records.stored_of(rs, apart)
        if damaged:
            raise RecordsMismatch(damaged)
        if index is not None:
            committed.restore_rest(scope, index)  # type: ignore[union-attr]
            _keep_taken(index, taken, missed, index.keys if read is None else read)
            state.steady = index
        for set_key, data in fetched:
            rs, before, on_disk = taken[set_key]
            state.replica_sets[set_key] = rs
            hot.raw[set_key] = data
            hot.before[set_key] = before
            stored[set_key] = on_disk
    # The SPU -> sets index is built when first asked (ClusterState.keys_of): a tick
    # with no SPU change never asks, and building it was 3% of a busy tick.


def _keep_taken(index: Steady, taken: dict[Key, Any], missed: list[Any],
                read: Iterable[Key]) -> None:
    """The image's steady index cut to the sets taken by their bytes: a set read anew is
    another object, maybe in another state; a set ``read`` finds no more (its topic deleted
    by another process, the Redis flushed or lost) is gone. Left in the index, a gone key
    was counted as steady: a new set loaded beside it was then in neither the index nor its
    list of the others, and no round or save ever visited it."""
    for set_key, _, _ in missed:
        index.drop(set_key)
    for set_key in [k for k in read if k not in taken]:
        index.drop(set_key, gone=True)


def fetch_records(missed: list[set_records.Missed]) -> dict[Key, list[int] | None]:
    """``set_records.fetch`` from the server of each set (hot_servers.py)."""
    if not hot_servers.spread():
        return set_records.fetch(missed)
    out: dict[Key, list[int] | None] = {}
    for server, group in hot_servers.grouped(missed, lambda m: shards.server_of(m[0])).items():
        out.update(set_records.fetch(group, hot_servers.client_of(server)))
    return out


def fetch_full(topics: dict[str, Any], rowed: dict[Key, bytes] | None = None
               ) -> list[tuple[Key, bytes]]:
    """Every set of the topics, as stored (spread: from every server, each holding its
    shards' fields of the same hashes), a row's entry over its field where one applies
    (status_rows.overlay, which tells ``rowed``)."""
    out = []
    for fields, rows in _stored(topics):
        out += status_rows.overlay(fields, rows, rowed, every=True)
    return out


def _stored(topics: dict[str, Any]
            ) -> Iterator[tuple[list[tuple[Key, bytes]], dict[str, dict[Any, bytes]]]]:
    """Each server's fields of every set of the topics, and its blocks' rows by topic."""
    names = list(topics)
    for server in hot_servers.servers():
        pipe = hot_servers.client_of(server).pipeline(transaction=True)
        for name in names:
            pipe.hgetall(sets_key(name))
            pipe.hgetall(status_rows.rows_key(name))  # the server's blocks' rows
        found = pipe.execute()
        yield ([((name, int(p)), data) for name, sets in zip(names, found[::2])
                for p, data in sets.items()], dict(zip(names, found[1::2])))


def keys_holding(topics: dict[str, Any], spus: Collection[int]) -> list[Key]:
    """Every set of the topics with a replica on one of ``spus``: from each shard's index of
    its sets by SPU when every one is exact (spu_index.py), else from the statuses as
    stored (every server's fields, a row's status entry over its field where one applies:
    status_rows.replica_sources), each unpacked for its replicas alone and none decoded
    into a set.

    What an SPU changing status needs loaded (engine/controllers.adopt_alone): the sets
    ``ClusterState.sets_of`` would find in the whole state, read under every lease, so
    none can be missed or gained meanwhile. At 100,000 partitions the scan reads the 11 MB
    of statuses a whole load reads, and neither their records nor a decode: 0.45 s
    (docs/engine-throughput.md); the indexes, the SPU's fields alone."""
    wanted = set(spus)
    if not wanted:
        return []
    if shards.sharded():
        indexed = spu_index.find(topics, wanted)  # each shard's index, when all are exact
        if indexed is not None:
            return indexed
    with gc_paused():
        return [set_key for fields, rows in _stored(topics)
                for set_key, data in status_rows.replica_sources(fields, rows)
                if not wanted.isdisjoint(status_fields(data)[3])]


def disagreeing(topics: dict[str, Any]) -> list[set_records.Disagreeing]:
    """Every stored set whose records disagree with its status (set_records.disagreeing),
    each checked on its own server."""
    fetched = fetch_full(topics)
    if not hot_servers.spread():
        return set_records.disagreeing(fetched)
    out = []
    for server, group in hot_servers.grouped(fetched, lambda f: shards.server_of(f[0])).items():
        out += set_records.disagreeing(group, hot_servers.client_of(server))
    return out


def fetch_some(keys: Iterable[Key], topics: dict[str, Any],
               rowed: dict[Key, bytes] | None = None) -> list[tuple[Key, bytes]]:
    """The named sets of the topics, as stored (those missing left out), a row's entry
    over its field where one applies (status_rows.overlay, which tells ``rowed``)."""
    wanted = [k for k in keys if k[0] in topics]
    out = []
    groups = (hot_servers.grouped(wanted, shards.server_of) if hot_servers.spread()
              else {hot_servers.HOME: wanted})
    for server, group in groups.items():
        by_topic: dict[str, list[int]] = {}
        for topic, partition in group:
            by_topic.setdefault(topic, []).append(partition)
        pipe = hot_servers.client_of(server).pipeline(transaction=True)
        for name, parts in by_topic.items():
            pipe.hmget(sets_key(name), [str(p) for p in parts])
        blocks = status_rows.blocks_of(group)  # their rows, on the same server
        for name, numbers in blocks.items():
            pipe.hmget(status_rows.rows_key(name), numbers)
        found = pipe.execute()
        fields = [((name, p), data) for (name, parts), read in zip(by_topic.items(), found)
                  for p, data in zip(parts, read) if data is not None]
        rows = {name: dict(zip(numbers, read))
                for (name, numbers), read in zip(blocks.items(), found[len(by_topic):])}
        out += status_rows.overlay(fields, rows, rowed)
    return out
