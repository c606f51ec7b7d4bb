"""A large save written as bounded fenced pieces, so no transaction holds Redis long.

One transaction for a whole busy tick held Redis for 0.3-1.2 s at 100,000 partitions
(one ``APPEND`` per partition in the records script, one hash field per status): every
page, produce and renewal waited that long, past ``REDIS_SOCKET_TIMEOUT_S`` on a loaded
machine. A save of more than ``REPLICATION_SAVE_PIECE_SETS`` changed sets is cut into
pieces of at most that many sets; each piece is one fenced transaction (lease.fenced_write:
refused once the lease passed on) holding its sets' statuses and their records (one
script: set_records.Writes.op) and the values their compaction released, so status and
records never disagree for any set, whatever lands. Pieces go in order:

* the first also carries the unit's staged writes (a produce's values and ticket, stored
  before anything could release them) and raises the record-id counter to the state's next
  id: a holder that loads the meta of before a crash still never gives an id out twice
  (``shards.adopt_record_ids``);
* the last carries the sets whose logged status moved (new leader, LRS, epoch: those the
  metadata-log entries describe), the meta and the log append: an entry never lands
  without its sets, nor its sets without it;
* every piece writes the new sets generation (set_cache), so any piece landing makes a
  process's cached sets untrusted.

A holder that stops between pieces (crash, lease lost) leaves the sets of the pieces that
landed one tick ahead in offsets and records only, each consistent with its own records:
what the next holder loads and steps on. A unit that adds topics writes their sets in the
pieces before the last, which names them (the meta, their entries): a holder stopped
between leaves sets of topics no meta names, which the first piece of the next save that
makes them deletes (``made_ops``). A unit that drops topics, or changes few sets, is one
transaction as before; a dropped topic's keys are deleted after it lands, in pieces of
their own (drop_pieces.py).
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Collection
from typing import Any, NamedTuple

from django.conf import settings

from cluster.adapters import status_rows
from cluster.adapters.hot_records import drop_values_op
from cluster.adapters.lease import WriteOp
from cluster.adapters.set_records import Run, Writes, packed_op, records_key
from cluster.core.replication import Key

# The keys of the sets one piece writes.
Group = list[Key]


def groups(keys: list[Key], hold: Collection[Key], limit: int | None = None) -> list[Group]:
    """``keys`` (the changed sets, in save order) in pieces of at most ``limit`` sets,
    those of ``hold`` in the last piece (which may exceed the limit: a status storm)."""
    limit = settings.REPLICATION_SAVE_PIECE_SETS if limit is None else limit
    if len(keys) <= limit:
        return [keys]
    held = set(hold)
    free = [k for k in keys if k not in held] if held else keys
    out = [free[i:i + limit] for i in range(0, len(free), limit)] or [[]]
    if held:
        last = [k for k in keys if k in held]
        if len(out[-1]) + len(last) > limit and out[-1]:
            out.append(last)
        else:
            out[-1] = out[-1] + last
    return out


def set_ops(group: Group, changed: dict[str, dict[str, bytes]], records: Writes,
            released: dict[Key, list[int]], sets_key: Callable[[str], str],
            values_key: Callable[[str], str], released_kept: Callable[[str], bool]
            ) -> list[WriteOp]:
    """One piece's writes of its sets: their statuses, their records, the values their
    compaction released (of topics ``released_kept`` says still exist)."""
    statuses: dict[str, dict[str, bytes]] = {}
    gone: dict[str, list[int]] = {}
    topic, fields, source = None, {}, {}
    for set_key in group:
        name, partition = set_key
        if name != topic:  # the keys come topic by topic
            topic = name
            fields = statuses.setdefault(name, {})
            source = changed[name]
        field = str(partition)
        fields[field] = source[field]
        if released:
            ids = released.get(set_key)
            if ids:
                gone.setdefault(name, []).extend(ids)
    # Statuses and records in one script (set_records.Writes.op): one command a piece.
    op = records.op(group, {sets_key(name): fields for name, fields in statuses.items()})
    ops = [op] if op is not None else []
    ops += _dropped_values(gone, values_key, released_kept)
    return ops


def spans(keys: list[Key], parts: list[Group]) -> list[tuple[int, int]] | None:
    """Each piece of ``parts`` as (start, end) in ``keys`` when every piece is the next
    slice of them (no held set, or held ones only at the end: a busy tick), else None."""
    out, at = [], 0
    for group in parts:
        end = at + len(group)
        if group != keys[at:end]:  # the same key objects: compared by identity, in C
            return None
        out.append((at, end))
        at = end
    return out if at == len(keys) else None


class Aligned(NamedTuple):
    """A save's changed sets as lists aligned with their keys (hot_save's loop builds
    them), so a piece that is a slice of the keys is built from slices (``slice_ops``)."""
    keys: list[Key]
    names: list[str]                  # each set's status field: str(partition)
    values: list[bytes]               # its status
    entries: list[bytes | None]       # its records entry (Writes.aligned)
    runs: list[int]                   # where each topic's run of keys starts
    released: list[tuple[int, Key]]   # the changed sets compaction released ids of, by place


def slice_ops(sets: Aligned, start: int, end: int, released: dict[Key, list[int]],
              sets_key: Callable[[str], str], values_key: Callable[[str], str],
              released_kept: Callable[[str], bool]) -> list[WriteOp] | None:
    """``set_ops`` for the piece ``keys[start:end]``: the same commands, built from slices
    of ``sets`` with no Python work a set; None when a topic comes back in the piece after
    another (``set_ops`` merges its statuses: left to it)."""
    runs, keys = sets.runs, sets.keys
    at = bisect_right(runs, start) - 1
    built: list[Run] = []
    while at < len(runs) and runs[at] < end:
        lo, hi = max(runs[at], start), min(runs[at + 1] if at + 1 < len(runs) else end, end)
        name = keys[lo][0]
        if built and any(run[1] == name for run in built):
            return None
        built.append((sets_key(name), name, sets.names[lo:hi], sets.values[lo:hi],
                      sets.entries[lo:hi]))
        at += 1
    op = packed_op(built)
    ops = [op] if op is not None else []
    places = sets.released
    first = bisect_left(places, (start,))
    last = bisect_left(places, (end,), first)
    gone: dict[str, list[int]] = {}
    for _, set_key in places[first:last]:
        gone.setdefault(set_key[0], []).extend(released[set_key])
    ops += _dropped_values(gone, values_key, released_kept)
    return ops


# What the engine's SPU loops note of the SPU table (spu_loops.py): the meta holds what
# they say and lands with them, last; the sets they move are the step's, held as such.
SPU_TABLE_ENTRIES = frozenset({"spu-registered", "spu-rack", "spu-sync"})


def whole_for_noted(noted: list[dict[str, Any]]) -> bool:
    """Whether the entries noted before the step keep the save one transaction: any but
    the SPU table's (a service's, which may name sets a step's entries do not)."""
    return any(entry.get("type") not in SPU_TABLE_ENTRIES for entry in noted)


def held_sets(entries: list[dict[str, Any]], moved: list[Key],
              made: Collection[str] = ()) -> set[Key] | None:
    """The sets that must land with the log append: those whose logged status moved and
    those an entry names, but the sets of the topics ``made`` (new to the hot state: no
    reader finds them before the meta names them, which lands last, with their
    ``topic-replicated`` entries). None: the save must be one transaction (another entry
    names a topic but no partition, or is no step's: a service noted it)."""
    held = {k for k in moved if k[0] not in made} if made else set(moved)
    for entry in entries:
        topic, partition = entry.get("topic"), entry.get("partition")
        if topic is None and "topics" in entry and entry.get("type") == "hw":
            continue  # offsets of sets in every piece, written once all have landed
        if topic in made and partition is None and entry.get("type") == "topic-replicated":
            continue
        if topic is None or partition is None:
            return None
        held.add((topic, partition))
    return held


def made_ops(leftover: dict[str, list[str]], sets_key: Callable[[str], str],
             values_key: Callable[[str], str]) -> list[WriteOp]:
    """The first piece's deletes of what an earlier save that made the same topics left
    when its holder stopped between pieces (``leftover``: each topic's status fields found
    before the save): their statuses, records, rows and values, which no meta named."""
    return [WriteOp("del", k) for name, fields in leftover.items()
            for k in (sets_key(name), status_rows.rows_key(name), values_key(name),
                      *(records_key(name, p) for p in fields))]


# A piece of rows holds up to this many bytes of rows (about 2,500 entries), or this many
# times the sets of a piece of fields: a piece costs the engine its round trips (a fenced
# write is five commands), and Redis about 1 ms per 100 KB of rows. 4,000 sets a piece
# (800 KB) held Redis up to 225 ms on a loaded machine (bench_pages.py --stepping).
ROW_PIECE_BYTES = 256 * 1024
ROW_PIECE_FACTOR = 8
# A block's row is rewritten when at least 1 in this many of the sets it holds changed;
# fewer are written as fields (a row rewritten for one set would cost what 200 did).
DENSE = 4


def released_ops(released: dict[Key, list[int]], values_key: Callable[[str], str],
                 keys: list[Key] | None, kept: Callable[[str], bool]) -> list[WriteOp]:
    """The values compaction released, of the sets of ``keys`` (None: every set), dropped
    (of the topics ``kept`` says still exist)."""
    gone: dict[str, list[int]] = {}
    if keys is not None and released:
        wanted = set(keys)
        released = {k: ids for k, ids in released.items() if k in wanted}
    for (name, _), ids in released.items():
        gone.setdefault(name, []).extend(ids)
    return _dropped_values(gone, values_key, kept)


def _dropped_values(gone: dict[str, list[int]], values_key: Callable[[str], str],
                    kept: Callable[[str], bool]) -> list[WriteOp]:
    """The writes dropping the values of the released ids ``gone`` (by topic), of the
    topics ``kept`` says still exist (a dropped topic's values key goes whole)."""
    return [drop_values_op(values_key(name), ids) for name, ids in gone.items() if kept(name)]


def row_pieces(blocks: status_rows.Blocks | None, records: Writes | None,
               raw: dict[Key, Any], rowed: dict[Key, bytes],
               released: dict[Key, list[int]], values_key: Callable[[str], str],
               kept: Callable[[str], bool]) -> list[list[WriteOp]]:
    """The rows a save rewrites (status_rows.py), in pieces of whole blocks of about
    ``ROW_PIECE_FACTOR`` times ``REPLICATION_SAVE_PIECE_SETS`` changed sets: each block's
    row with its sets' records (``records``: theirs alone) and released values, in one
    script."""
    if blocks is None or records is None or not blocks.dirty:
        return []
    limit = ROW_PIECE_FACTOR * settings.REPLICATION_SAVE_PIECE_SETS
    pieces: list[list[WriteOp]] = []
    group: list[Key] = []
    rows: dict[str, dict[str, bytes]] = {}
    size = 0

    def flush() -> None:
        op = records.op(group, rows)
        pieces.append(([op] if op is not None else [])
                      + released_ops(released, values_key, group, kept))

    # A topic's rows key is this and its name (status_rows.rows_key): made once, not a
    # key a block (a cluster of 5,000 small topics has 5,000 blocks a busy save).
    rows_keys = status_rows.rows_key("")
    topic, name = None, ""
    for block, keys in blocks.dirty.items():
        if block[0] != topic:
            topic = block[0]
            name = rows_keys + topic
        row = rows.setdefault(name, {})[str(block[1])] = blocks.row(block, raw, rowed)
        group += keys
        size += len(row)
        if len(group) >= limit or size >= ROW_PIECE_BYTES:
            flush()
            group, rows, size = [], {}, 0
    if group:
        flush()
    return pieces


def sparse_to_fields(encoded: Any, raw: dict[Key, Any], rowed: dict[Key, bytes],
                     records: Writes, status_of: Callable[[Key], bytes]) -> None:
    """The changed sets of each block where fewer than 1 in ``DENSE`` of the sets its row
    holds changed (``encoded``: hot_save's ``_Encoded``), moved from the rows to the fields
    the save writes: appended to its aligned lists and ``records``, their heads now their
    new fields' (``status_of``: the status of a set collected as figures). Their entries
    stay in the row, which this save does not rewrite, until the fields land; from then on
    the fields are what they are (status_rows.py)."""
    blocks, row_records = encoded.rows, encoded.row_records
    keys, names, values, runs = encoded.keys, encoded.names, encoded.values, encoded.runs
    for block, changed in list(blocks.dirty.items()):
        # (A full block's sets are all in its row: no lookup of its keys to count them.)
        held = len(changed) if blocks.full(block) else blocks.held(block, rowed)
        if len(changed) * DENSE >= held:
            continue
        blocks.drop(block)
        topic = block[0]
        fields = encoded.changed.setdefault(topic, {})
        for set_key in changed:
            data, field = raw[set_key], str(set_key[1])
            if type(data) is tuple:  # figures (status_rows.py): the field is a status
                data = raw[set_key] = status_of(set_key)
            if not keys or keys[-1][0] != topic:
                runs.append(len(keys))
            if set_key in encoded.released_at:
                encoded.released_at[set_key] = len(keys)
            keys.append(set_key)
            names.append(field)
            values.append(data)
            fields[field] = data
            entry = row_records.writes.pop(set_key, None)
            if entry is not None:
                records.writes[set_key] = entry
            records.aligned.append(entry)
            rowed[set_key] = status_rows.head(set_key[1], data)
