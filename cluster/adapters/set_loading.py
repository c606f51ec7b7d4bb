"""How a load of the hot state gets its replica sets: from this process's set cache when
nobody else wrote them (``take_trusted``), else read from Redis and taken from the cache
by their bytes or decoded (``fetch_full``/``fetch_some``, then ``adopt``).

Split from hot_state.py, which re-exports ``sets_key``; the ``HotState`` these fill
lives in hot_types.py.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cluster.adapters import set_cache, set_records
from cluster.adapters.hot_types import HotState
from cluster.adapters.redis_keys import client, key, store_namespace
from cluster.adapters.set_codec import RecordsMismatch, decode_fields, status_fields, summary
from cluster.core.replication import Key
from cluster.perf import gc_paused


def sets_key(topic: str) -> str:
    """The hash of a topic's replica sets (field: partition index, value: its status)."""
    return key(f"sets:{topic}")


def cache_scope(hot: HotState) -> set_cache.Scope:
    """The set cache's image a unit of work under ``hot``'s leases uses."""
    return store_namespace(), hot.scope


def take_trusted(hot: HotState, keys: Iterable[Key] | None) -> bool:
    """Take the sets from this process's image under the same leases, if nobody else
    wrote a set they guard since it was exact (set_cache): the whole image for a complete
    load, without reading or passing over its sets; the named sets otherwise, reading
    only those it lacks. False (nothing taken) when the image cannot be trusted."""
    scope = cache_scope(hot)
    if hot.complete:
        image = (set_cache.take_all(scope, hot.generation, topics=hot.topics) if keys is None
                 else set_cache.take_all(scope, hot.generation, keys=keys))
        if image is None:
            return False
        hot.state.replica_sets, hot.raw, hot.before, hot.stored = (
            image.sets, image.raw, image.summaries, image.stored)
        hot.state.steady = image.steady
        hot.exact = True
        return True
    if keys is None or not set_cache.trusted(scope, hot.generation):
        return False
    missing = []
    with gc_paused():
        for set_key in keys:
            if set_key[0] not in hot.topics or set_key in hot.state.replica_sets:
                continue
            kept = set_cache.take_trusted(scope, set_key)
            if kept is None:
                missing.append(set_key)
                continue
            hot.raw[set_key], rs, hot.before[set_key], hot.stored[set_key] = kept
            hot.state.replica_sets[set_key] = rs
    if missing:  # a set the image lacks is one the store lacks too, unless it was dropped
        adopt(hot, fetch_some(missing, hot.topics), False)
    hot.exact = True
    return True


def adopt(hot: HotState, fetched: list[tuple[Key, bytes]], take_committed: bool) -> None:
    """Put the fetched sets in ``hot``: taken from the set cache when their bytes are the
    ones this process committed (``take_committed``), else decoded with their records."""
    state, stored = hot.state, hot.stored
    scope = cache_scope(hot)
    with gc_paused():
        taken, missed = {}, []
        for set_key, data in fetched:
            kept = known = None
            if take_committed:
                kept, known = set_cache.take(scope, set_key, data)
            if kept is None:
                missed.append((set_key, status_fields(data), known))
            else:
                taken[set_key] = kept
        records = set_records.fetch(missed)
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
        for set_key, data in fetched:
            rs, before, on_disk = taken[set_key]
            state.replica_sets[set_key] = rs
            hot.raw[set_key] = data
            hot.before[set_key] = before
            stored[set_key] = on_disk
    # The SPU -> sets index is built when first asked (ClusterState.keys_of): a tick
    # with no SPU change never asks, and building it was 3% of a busy tick.


def fetch_full(topics: dict[str, Any]) -> list[tuple[Key, bytes]]:
    """Every set of the topics, as stored."""
    names = list(topics)
    pipe = client().pipeline(transaction=True)
    for name in names:
        pipe.hgetall(sets_key(name))
    return [((name, int(p)), data) for name, found in zip(names, pipe.execute())
            for p, data in found.items()]


def fetch_some(keys: Iterable[Key], topics: dict[str, Any]) -> list[tuple[Key, bytes]]:
    """The named sets of the topics, as stored (those missing left out)."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in keys:
        if topic in topics:
            by_topic.setdefault(topic, []).append(partition)
    pipe = client().pipeline(transaction=True)
    for name, parts in by_topic.items():
        pipe.hmget(sets_key(name), [str(p) for p in parts])
    out = []
    for (name, parts), found in zip(by_topic.items(), pipe.execute()):
        out += [((name, p), data) for p, data in zip(parts, found) if data is not None]
    return out
