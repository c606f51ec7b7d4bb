"""Steady sets' statuses written a block of partitions at a time (the columnar tier's
stored half, docs/engine-throughput.md).

A busy tick at 100,000 partitions wrote 100,000 hash fields, one status a set: most of
Redis's CPU for that tick, and much of redis-py's. A set in the steady index whose field
this process knows (below) has its status written instead as an *entry* of its block's
row, ``rows:<topic>`` field ``partition // shards.BLOCK``: one field a block, rewritten
whole.

**An entry names the field it overrides.** Each entry is (partition, anchor, status), the
anchor being a fingerprint (8 bytes of blake2b) of the bytes the set's own field held when
the entry was written. A reader takes the entry's status only while the field still has
that anchor (``overlay``). Any other writer (a produce from the web, a shard's unit, the
spread save, ``store repair``, recovery) writes the field, as it always did, and so makes
the entry stale without knowing about rows: nobody must find and delete entries. A field
never comes back to bytes it held before (its records' count and last id only grow, and a
truncated log grows back with new ids), so a stale entry never applies again.

**Who writes rows.** Only a save of a unit that loaded every set its leases guard
(``hot.complete``: the whole state, or whole shards): a block is rewritten whole, so the
writer must know every set in it whose truth is an entry. A block is a shard's block
(``shards.BLOCK`` partitions, wholly one shard's, so on one server): a shard's unit writes
its own blocks' rows, on its server, as it writes its sets. ``HotState.rowed`` names those sets
with their anchors (carried in the set cache's image with the sets). A set enters when its
field is written while it is steady (its anchor is then that field's); from its next
change on it is written as an entry; a write of its field (it left the index, or a unit
that writes no rows) gives it that field's anchor again.

**Order between pieces.** A set's entry lands with its records (the block's sets, its row
and their records in one piece). A set whose field is written in a save while its block's
row is rewritten in another piece keeps its old entry in that row for this save
(``Blocks.old``): whichever lands first, readers see the old status or the new one.

Readers go through ``overlay`` (set_loading.fetch_full/fetch_some, hot_state's single
read): every decoder then sees the very bytes ``encode_status`` gave, as before.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from hashlib import blake2b
from typing import Any

from django.conf import settings

from cluster.adapters import shards
from cluster.adapters.hot_types import HotState
from cluster.adapters.redis_keys import key
from cluster.adapters.row_format import HEAD, entries, entries_of, row_of, status_entries
from cluster.adapters.steady_codec import Figures, from_figures
from cluster.core.replication import Key
from cluster.perf import gc_paused


# A block's lists as the save's loop collects them (``Blocks.collect``).
Collected = tuple[list[Key], list[bytes], list[bytes], list[Figures]]


def allowed(hot: HotState) -> bool:
    """Whether ``hot``'s save may rewrite rows: it loaded every set its leases guard (the
    whole state or whole shards: a row, a shard's block, is rewritten whole)."""
    return bool(settings.REPLICATION_STATUS_ROWS) and hot.complete


def rows_key(topic: str) -> str:
    """The hash of a topic's rows (field: block number, value: its entries, row_format.py)."""
    return key(f"rows:{topic}")


def anchor(field: bytes) -> bytes:
    """The fingerprint an entry names its set's field by."""
    return blake2b(field, digest_size=8).digest()


def head(partition: int, field: bytes) -> bytes:
    """The head of a set's entries while its field is ``field``: its partition and the
    field's anchor (``HotState.rowed`` keeps it)."""
    return HEAD.pack(partition, anchor(field))


def block_of(partition: int) -> int:
    """The row a partition's entry goes in: its shard's block (shards.BLOCK partitions, so a
    busy tick rewrites 500 rows at 100,000 partitions, each about 20 KB, where it wrote
    100,000 fields)."""
    return partition // shards.BLOCK


def split(heads: list[bytes], payloads: list[bytes | Figures]) -> bytes:
    """A row of entries each a status or figures (as ``HotState.raw`` holds them; figures
    with their head last, which the entries' ``heads`` then stand for)."""
    statuses, status_heads, figures = [], [], []
    for h, payload in zip(heads, payloads):
        if type(payload) is tuple:
            figures.append(payload[:6] + (h,))
        else:
            status_heads.append(h)
            statuses.append(payload)
    return row_of(status_heads, statuses, figures)  # type: ignore[arg-type]


def _anchored(rows: Mapping[str, Mapping[Any, bytes | None]],
              read: Callable[[str, bytes], Iterable[tuple[int, bytes, Any]]]
              ) -> dict[Key, tuple[bytes, Any]]:
    """By set key, the anchor and the status (or figures) of each entry ``read`` finds in
    the rows (by topic, then block; ``read`` is given the topic and the row)."""
    found: dict[Key, tuple[bytes, Any]] = {}
    for topic, blocks in rows.items():
        for row in blocks.values():
            if row:
                for partition, anchored, status in read(topic, row):
                    found[(topic, partition)] = anchored, status
    return found


def replica_sources(fields: list[tuple[Key, bytes]],
                    rows: Mapping[str, Mapping[Any, bytes | None]]
                    ) -> list[tuple[Key, bytes]]:
    """``overlay`` for a reader of the sets' replicas alone: each set's field, or the status
    of a row's status entry anchored to it. A figures entry is not read: the status it
    stands for is its anchored field with the moving figures put in
    (steady_codec.from_figures), replicas untouched, so the field names them. (Rebuilding
    every steady set's status was 0.9 s of finding an SPU's sets at 100,000 partitions.)"""
    found = _anchored(rows, lambda _, row: status_entries(row)[0])
    if not found:
        return fields
    out = []
    for set_key, data in fields:
        hit = found.get(set_key)
        out.append((set_key, hit[1] if hit is not None and hit[0] == anchor(data) else data))
    return out


def overlay(fields: list[tuple[Key, bytes]], rows: Mapping[str, Mapping[Any, bytes | None]],
            rowed: dict[Key, bytes] | None = None, *, every: bool = False
            ) -> list[tuple[Key, bytes]]:
    """``fields`` (each set's field as stored) with the status of each set whose row holds
    an entry anchored to that field: what the set is. ``rows``: by topic, the rows read
    (block number as the field's name, bytes or str; None: no such row). ``rowed``, when
    given, learns each set's state: its entries' head (``head``) where an entry applied,
    else nothing. ``every``: ``fields`` are every field of the rows' topics (a full read),
    so every entry is wanted."""
    with gc_paused():  # tens of thousands of entries, figures and rebuilt statuses
        return _overlay(fields, rows, rowed, every)


def _overlay(fields: list[tuple[Key, bytes]], rows: Mapping[str, Mapping[Any, bytes | None]],
             rowed: dict[Key, bytes] | None, every: bool) -> list[tuple[Key, bytes]]:
    if every:
        found = _anchored(rows, lambda _, row: entries(row))
    else:
        # The fields' entries alone: a load of some sets reads their blocks' whole rows,
        # and decoding every entry was 0.24 s of an SPU's change at 100,000 partitions.
        wanted: dict[str, set[int]] = defaultdict(set)
        for (topic, partition), _ in fields:
            wanted[topic].add(partition)
        found = _anchored(rows, lambda topic, row: entries_of(row, wanted[topic]))
    if not found:
        if rowed:
            for set_key, _ in fields:
                rowed.pop(set_key, None)
        return fields
    out = []
    for set_key, data in fields:
        hit = found.get(set_key)
        if hit is not None and hit[0] == anchor(data):
            entry = hit[1]
            data = from_figures(data, entry) if isinstance(entry, tuple) else entry
            if rowed is not None:
                rowed[set_key] = HEAD.pack(set_key[1], hit[0])
        elif rowed is not None:
            rowed.pop(set_key, None)
        out.append((set_key, data))
    return out


def block_keys(block: tuple[str, int], count: int | None = None) -> list[Key]:
    """The keys of every set a block may hold, in partition order; ``count``: the topic's
    partitions, when known (a topic of 10 partitions has 10 keys in its block, not 200:
    at 10,000 such topics, 2,000,000 keys built and looked up a busy save)."""
    topic, number = block
    size = shards.BLOCK
    first = number * size
    last = first + size if count is None else min(first + size, count)
    return [(topic, p) for p in range(first, last)]


def blocks_of(keys: Iterable[Key]) -> dict[str, list[str]]:
    """The rows (block numbers as field names) holding ``keys``, by topic."""
    out: dict[str, dict[str, None]] = {}
    size = shards.BLOCK
    for topic, partition in keys:
        out.setdefault(topic, {})[str(partition // size)] = None
    return {topic: list(names) for topic, names in out.items()}


class Blocks:
    """A save's rows: the blocks whose sets changed (``dirty``) and the old entries of the
    sets whose fields it writes (``old``), then each dirty block's row (``row``)."""

    def __init__(self, topics: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        # The unit's topic tables (hot_types.TopicTable): each topic's partitions, where
        # known (``block_keys``). Partitions only grow, and a unit that writes rows loaded
        # its topics' tables with their sets.
        self.topics = topics or {}
        self.dirty: dict[tuple[str, int], list[Key]] = {}
        # A set whose field this save writes: its entry (head, status) until that write
        # lands (None: it had none).
        self.old: dict[Key, tuple[bytes, bytes | Figures] | None] = {}
        # Each block's keys and its sets' heads as ``held`` read them, for its ``row``: the
        # same 200 lookups a block, once.
        self._read: dict[tuple[str, int], tuple[list[Key], list[bytes | None]]] = {}
        # The heads and statuses (or figures) of each dirty block's sets, as the save's
        # loop found them (``collect``): a block all of whose sets changed, every block of
        # a busy tick, is its row as it stands, with no lookup a set.
        self._collected: dict[tuple[str, int], Collected] = {}
        self._sizes: dict[tuple[str, int], int] = {}  # each collected block's (``_size``)

    def collect(self, block: tuple[str, int]) -> Collected:
        """The lists the save's loop appends a changed set of ``block`` to: its key (in
        ``dirty``), then its head and its status, or its figures (their head last)."""
        found = self._collected.get(block)
        if found is None:
            found = self._collected[block] = (self.dirty.setdefault(block, []), [], [], [])
            self._sizes[block] = self._size(block)
        return found

    def _size(self, block: tuple[str, int]) -> int:
        """How many sets the block may hold: its topic's partitions in it, where known."""
        size = shards.BLOCK
        count = self._count(block[0])
        if count is not None:  # (a topic's last block, or a topic smaller than a block)
            size = min(size, count - block[1] * size)
        return size

    def _count(self, topic: str) -> int | None:
        table = self.topics.get(topic)
        partitions = table.get("partitions") if table else None
        return len(partitions) if partitions else None

    def full(self, block: tuple[str, int]) -> bool:
        """Whether every set the block may hold (its topic's partitions in it, where known)
        changed and was collected: its row is what the loop collected, whatever the rest
        of the save does (a set whose field the save writes is none of them)."""
        found = self._collected.get(block)
        # (Its size found once, as it was collected: asked again of each block by the
        # sparse blocks' pass and by its row, at 5,000 topics 5,000 blocks a busy save.)
        return found is not None and len(found[0]) == self._sizes[block]

    def drop(self, block: tuple[str, int]) -> list[Key]:
        """Take the block out of the rows this save rewrites; its changed sets."""
        self._collected.pop(block, None)
        return self.dirty.pop(block)

    def _keys(self, block: tuple[str, int]) -> list[Key]:
        """The block's keys (``block_keys``), to the last changed set's at least."""
        count = self._count(block[0])
        changed = self.dirty.get(block)
        if count is not None and changed:
            count = max(count, 1 + max([p for _, p in changed]))
        return block_keys(block, count)

    def leaving(self, set_key: Key, headed: bytes | None, status: bytes | Figures | None
                ) -> None:
        """``set_key``'s field is written by this save; its entry (``headed``, ``status``:
        its last one, if it had one) stays in its row until that lands."""
        self.old[set_key] = ((headed, status) if headed is not None and status is not None
                             else None)

    def held(self, block: tuple[str, int], rowed: Mapping[Key, bytes]) -> int:
        """How many of the block's sets a row may hold (``rowed``, as the save's loop left
        it: nothing changes it before the block's ``row``)."""
        keys = self._keys(block)
        heads = list(map(rowed.get, keys))
        self._read[block] = keys, heads
        return len(heads) - heads.count(None)

    def row(self, block: tuple[str, int], raw: Mapping[Key, Any],
            rowed: Mapping[Key, bytes]) -> bytes:
        """The block's row: an entry for each of its sets whose truth is one."""
        if self.full(block):
            collected = self._collected.pop(block)
            return row_of(collected[1], collected[2], collected[3])
        read = self._read.pop(block, None)
        if read is None:
            keys = self._keys(block)
            read = keys, list(map(rowed.get, keys))
        keys, heads = read
        statuses = list(map(raw.get, keys))
        old = self.old
        if old and not old.keys().isdisjoint(keys):
            for i, set_key in enumerate(keys):
                if set_key in old:
                    kept = old[set_key]
                    heads[i], statuses[i] = kept if kept is not None else (None, None)
        if None in heads or None in statuses:
            # (A set out of rows, or gone: its topic deleted by another process.)
            pairs = [(h, s) for h, s in zip(heads, statuses) if h is not None and s is not None]
            heads, statuses = [h for h, _ in pairs], [s for _, s in pairs]
        return split(heads, statuses)  # type: ignore[arg-type]
