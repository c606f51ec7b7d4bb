"""Steady sets' statuses written a block of partitions at a time (the columnar tier's
stored half, docs/engine-throughput.md).

A busy tick at 100,000 partitions wrote 100,000 hash fields, one status a set: most of
Redis's CPU for that tick, and much of redis-py's. A set in the steady index whose field
this process knows (below) has its status written instead as an *entry* of its block's
row, ``rows:<topic>`` field ``partition // ROW_BLOCK``: one field a block, rewritten whole.

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

from collections.abc import Iterable, Iterator, Mapping
from hashlib import blake2b
from struct import Struct
from typing import Any

from cluster.adapters import shards
from cluster.adapters.redis_keys import key
from cluster.core.replication import Key

# An entry's head: partition, anchor, the status's length.
_HEAD = Struct(">I8sI")


def rows_key(topic: str) -> str:
    """The hash of a topic's rows (field: block number, value: its entries end to end)."""
    return key(f"rows:{topic}")


def anchor(field: bytes) -> bytes:
    """The fingerprint an entry names its set's field by."""
    return blake2b(field, digest_size=8).digest()


def block_of(partition: int) -> int:
    """The row a partition's entry goes in: its shard's block (shards.BLOCK partitions, so a
    busy tick rewrites 500 rows at 100,000 partitions, each about 20 KB, where it wrote
    100,000 fields)."""
    return partition // shards.BLOCK


def entry(partition: int, anchored: bytes, status: bytes) -> bytes:
    return _HEAD.pack(partition, anchored, len(status)) + status


def entries(row: bytes) -> Iterator[tuple[int, bytes, bytes]]:
    """A row's entries: (partition, anchor, status)."""
    at, size, head = 0, len(row), _HEAD.size
    while at < size:
        partition, anchored, length = _HEAD.unpack_from(row, at)
        at += head
        yield partition, anchored, row[at:at + length]
        at += length


def overlay(fields: list[tuple[Key, bytes]], rows: Mapping[str, Mapping[Any, bytes | None]],
            rowed: dict[Key, bytes] | None = None) -> list[tuple[Key, bytes]]:
    """``fields`` (each set's field as stored) with the status of each set whose row holds
    an entry anchored to that field: what the set is. ``rows``: by topic, the rows read
    (block number as the field's name, bytes or str; None: no such row). ``rowed``, when
    given, learns each set's state: its anchor where an entry applied, else nothing."""
    found: dict[Key, tuple[bytes, bytes]] = {}
    for topic, blocks in rows.items():
        for row in blocks.values():
            if row:
                for partition, anchored, status in entries(row):
                    found[(topic, partition)] = anchored, status
    if not found:
        if rowed:
            for set_key, _ in fields:
                rowed.pop(set_key, None)
        return fields
    out = []
    for set_key, data in fields:
        hit = found.get(set_key)
        if hit is not None and hit[0] == anchor(data):
            data = hit[1]
            if rowed is not None:
                rowed[set_key] = hit[0]
        elif rowed is not None:
            rowed.pop(set_key, None)
        out.append((set_key, data))
    return out


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

    def __init__(self) -> None:
        self.dirty: dict[tuple[str, int], list[Key]] = {}
        # A set whose field this save writes: its entry until that write lands (None: it
        # had none).
        self.old: dict[Key, bytes | None] = {}

    def changed(self, set_key: Key) -> None:
        block = (set_key[0], block_of(set_key[1]))
        keys = self.dirty.get(block)
        if keys is None:
            self.dirty[block] = [set_key]
        else:
            keys.append(set_key)

    def leaving(self, set_key: Key, anchored: bytes | None, status: bytes | None) -> None:
        """``set_key``'s field is written by this save; its entry (``anchored``,
        ``status``: its last one, if it had one) stays in its row until that lands."""
        self.old[set_key] = (entry(set_key[1], anchored, status)
                             if anchored is not None and status is not None else None)

    def row(self, block: tuple[str, int], raw: Mapping[Key, bytes],
            rowed: Mapping[Key, bytes]) -> bytes:
        """The block's row: an entry for each of its sets whose truth is one."""
        topic, number = block
        size = shards.BLOCK
        first = number * size
        old = self.old
        parts = []
        for partition in range(first, first + size):
            set_key = (topic, partition)
            if old and set_key in old:
                kept = old[set_key]
                if kept is not None:
                    parts.append(kept)
                continue
            anchored = rowed.get(set_key)
            if anchored is not None:
                status = raw.get(set_key)
                if status is not None:  # else gone (its topic deleted by another process)
                    parts += (_HEAD.pack(partition, anchored, len(status)), status)
        return b"".join(parts)
