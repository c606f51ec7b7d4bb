"""A save's compaction and encoding loop: which loaded sets changed, their bytes, their
records' writes, and whether each goes in a field or in its block's row (status_rows.py),
as a status or, for a steady set whose every replica is in the LRS, as its figures
(steady_codec.Figures: no status is packed for it).

Split from hot_save.py, which writes what this finds (hot_save.py re-exports nothing of
it: the bench and the tests name it here). At 100,000 busy partitions this loop is the
largest part of a tick. A set is a few microseconds of dictionary probes and objects far
apart in memory (docs/engine-throughput.md, rounds 16, 20 and 24): the figures' path
probes the memo and ``raw`` (whose figures carry the entry's head) and the records' run
one tick in eight, and makes no summary (summaries.Saved makes those the projections read).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from django.conf import settings

from cluster.adapters import save_pieces, set_records, shards, status_rows
from cluster.adapters.hot_types import HotState, TopicTable, partition_count
from cluster.adapters.set_codec import RECORDS_BLOCK, encode_status
from cluster.adapters.steady_codec import NO_CLOCK, steady_encoder
from cluster.core.replication import Key, Replica, ReplicaSet
from cluster.core.replication.compaction import (compact_at, compaction_cut,
                                                 reference_replica, retention_for)
from cluster.perf import gc_paused


class Encoded(NamedTuple):
    """What a save's loop found changed, and how it is to be written (hot_save.py)."""
    changed: dict[str, dict[str, bytes]]  # the statuses that changed, by topic and partition
    keys: list[Key]                       # their keys, in that order
    released: dict[Key, list[int]]        # record ids compaction released, by set
    # Aligned with ``keys``, for pieces built from slices (save_pieces.slice_ops): each
    # set's status field name and value, where each topic's run starts, and the place in
    # ``keys`` each released set would take (its own if it changed, else another's).
    names: list[str]
    values: list[bytes]
    runs: list[int]
    released_at: dict[Key, int]
    # The changed sets whose status goes in their block's row (status_rows.py), and their
    # records' writes: not in ``changed``, ``keys`` or ``records``.
    rows: status_rows.Blocks | None = None
    row_records: set_records.Writes | None = None

    @property
    def every_key(self) -> list[Key]:
        """Every changed set: written as a field, then as a row's entry."""
        if self.rows is None or not self.rows.dirty:
            return self.keys
        return self.keys + [k for keys in self.rows.dirty.values() for k in keys]


def compact_and_encode(hot: HotState, retain: int | None, records: set_records.Writes,
                        sets: dict[Key, ReplicaSet] | None = None, *,
                        rows: bool = False) -> Encoded:
    """Compact every loaded set (or those of ``sets``) and encode each status; return what
    changed (``Encoded``), and add to ``records`` the writes of the changed sets' records.
    ``rows``: a steady set whose field's anchor is known goes in its block's row instead
    (status_rows.py: only a save that loaded every set may rewrite rows).

    A steady set this save's predecessor already encoded (core.replication.steady: no rule
    touched it since, and its compaction is where that save left it) is passed over: its
    bytes are the stored ones. At 100,000 partitions with a thousand busy, encoding every
    set only to find it unchanged was a third of the tick. One server's part of a spread
    save (``sets``) is encoded whole: the index is not split by server."""
    retain = retention(hot.topics) if retain is None else retain
    blocks = status_rows.Blocks(hot.topics) if rows else None
    out = Encoded({}, [], {}, [], [], [], {}, blocks,
                   set_records.Writes() if rows else None)
    changed, keys = out.changed, out.keys
    rowed, dirty = hot.rowed, blocks.dirty if blocks is not None else None
    joined = hot.state.steady.joined
    size = shards.BLOCK  # a row is a shard's block (status_rows.block_of)
    names, values, runs, released_at = out.names, out.values, out.runs, out.released_at
    raw, stored, after = hot.raw, hot.stored, hot.after
    topic, fields = None, {}
    items: Iterable[tuple[Key, ReplicaSet]]
    steady = hot.state.steady
    # The HW of the sets a round levelled and nobody touched since (core.replication.steady:
    # the producers' append writes the rest): compaction and the encodings read it.
    steady.settle_levels(hot.state.replica_sets)
    # The sets in the steady index: their encoding's short form, with the index's clock.
    level, encode_steady = steady.keys, steady_encoder(steady.round_ms, steady.memo)
    memo_get: Callable[[Key], Any] = steady.memo.get
    if sets is None:
        loaded = hot.state.replica_sets
        steady.saving_under(retain)
        unsaved = steady.unsaved_keys(loaded)
        items = loaded.items() if unsaved is loaded else [(k, loaded[k]) for k in unsaved]
        steady.encoded()  # the fresh steady sets are in ``items``: their bytes once it lands
    else:
        items = sets.items()
    with gc_paused():
        step = _step(retain)
        follow, append = records.follow, records.append
        if out.row_records is not None:
            row_follow, row_append = out.row_records.follow, out.row_records.append
        released = out.released
        # The block the last set in a row went to, its keys and its entries (status_rows:
        # sets come topic by topic, partition by partition, so one probe a block).
        at_topic, at_number = None, -1
        in_block: status_rows.Collected = ([], [], [], [])
        # A trailing follower's clock as figures hold it (steady_codec.Figures).
        clock = NO_CLOCK if steady.round_ms is None else steady.round_ms
        if sets is None:  # (a spread save's parts, one a server, add to one list)
            hot.figured = []
        figured_append = hot.figured.append
        for set_key, rs in items:
            # Compaction moves every replica's start, never which one is the reference.
            # The memo's keys are steady (core.replication.steady): one probe for most sets.
            parts = memo_get(set_key)
            steady_key = parts is not None or set_key in level
            if steady_key:  # the leader is the reference; most ticks compact nothing
                ref = rs.replica[rs.leader]  # type: ignore[index]
                if rs.hw - retain - ref.start >= step:
                    gone = _compact(rs, ref, retain, step)
                    if gone:
                        released[set_key] = gone
                        released_at[set_key] = len(keys)
                if (dirty is not None and parts is not None and len(parts) == 10
                        and parts[9] is None):
                    # Every replica in the LRS (steady_codec.figured): in its block's row as
                    # its figures, when it is in rows (below, as a status). Figures it was
                    # saved as carry its entry's head (a write of its field, the only change
                    # of its head, replaces them by bytes): one probe fewer a set.
                    was = raw.get(set_key)
                    if type(was) is tuple:
                        headed, data = was[6], None
                    else:  # stored as bytes: unchanged if they are what it encodes to
                        data, summed = encode_steady(set_key, rs, ref, parts)
                        if was == data:
                            continue
                        headed = rowed.get(set_key)
                    if headed is not None and not (joined and set_key in joined):
                        hw, log, start = rs.hw, ref.log, ref.start
                        leo = start + len(log)
                        # set_codec.apart_count, spelled out.
                        end = leo - (leo + set_key[1]) % RECORDS_BLOCK
                        count = end - start if end > start else 0
                        last = log[count - 1] if count else -1
                        clocked = clock if leo != hw else NO_CLOCK
                        if type(was) is tuple:
                            # (The same HW, LEO, start and clock: the same figures. Its LEO
                            # kept, for the reservations: summaries.Saved.leo_before.)
                            if (was[1] == leo and was[0] == hw and was[2] == start
                                    and was[4] == clocked):
                                continue
                            leo_before = was[1]
                        else:
                            leo_before = -1
                        figures = (hw, leo, start, last, clocked, log[count:], headed,
                                   leo_before)
                        raw[set_key] = figures
                        number = set_key[1] // size
                        if number != at_number or set_key[0] != at_topic:
                            at_topic, at_number = set_key[0], number
                            in_block = blocks.collect((at_topic, number))  # type: ignore[union-attr]
                        in_block[0].append(set_key)
                        in_block[3].append(figures)
                        # Its records apart are the run it was saved with (same start, same
                        # last id) seven ticks in eight: nothing to write, nothing to look up.
                        if type(was) is not tuple or was[2] != start or was[3] != last:
                            before = stored.get(set_key)
                            stored[set_key] = (
                                before is not None and row_append(set_key, before, ref)
                                or row_follow(set_key, before, ref))
                        # No summary: the projections make the few they read
                        # (summaries.Saved).
                        figured_append(set_key)
                        continue
                    if data is None:
                        data, summed = encode_steady(set_key, rs, ref, parts)
                else:
                    data, summed = encode_steady(set_key, rs, ref, parts)
            else:
                ref = reference_replica(rs)
                gone = _compact(rs, ref, retain, step)
                if gone:
                    released[set_key] = gone
                    released_at[set_key] = len(keys)
                data, summed = encode_status(rs, ref)
            if raw.get(set_key) != data:
                headed = rowed.get(set_key) if steady_key and dirty is not None else None
                if headed is not None and not (joined and set_key in joined):
                    # In its block's row (status_rows.py), with its records in the row's
                    # piece. Only a set steady since the last save: its logged status (what
                    # must land with the log, in the last piece) has not moved.
                    raw[set_key] = data
                    number = set_key[1] // size
                    if number != at_number or set_key[0] != at_topic:
                        at_topic, at_number = set_key[0], number
                        in_block = blocks.collect((at_topic, number))  # type: ignore[union-attr]
                    in_block[0].append(set_key)
                    in_block[1].append(headed)
                    in_block[2].append(data)
                    before = stored.get(set_key)
                    stored[set_key] = (before is not None and row_append(set_key, before, ref)
                                       or row_follow(set_key, before, ref))
                    after[set_key] = summed
                    continue
                if rowed:
                    anchored = rowed.pop(set_key, None)
                    if anchored is not None and blocks is not None:
                        blocks.leaving(set_key, anchored, raw.get(set_key))
                if blocks is not None and steady_key:  # in rows from its next change
                    rowed[set_key] = status_rows.head(set_key[1], data)
                if set_key[0] != topic:  # sets come topic by topic
                    topic = set_key[0]
                    fields = changed.get(topic) or changed.setdefault(topic, {})
                    runs.append(len(keys))
                field = str(set_key[1])
                fields[field] = data
                keys.append(set_key)
                names.append(field)
                values.append(data)
                raw[set_key] = data
                # Most busy sets only gained records at the end of the same run: their
                # append, without follow's other cases (Writes.append).
                before = stored.get(set_key)
                stored[set_key] = (before is not None and append(set_key, before, ref)
                                   or follow(set_key, before, ref))
                # Summed up with its encoding: a pass of its own over 10,000 sets later
                # cost three times as much, in cache misses.
                after[set_key] = summed
    if dirty:
        loaded = hot.state.replica_sets
        unfigured: set[Key] = set()

        def status_of(set_key: Key) -> bytes:
            # A set collected as figures whose block is written as fields after all: its
            # status, and its summary, as for any set whose field the save writes.
            rs = loaded[set_key]
            data, after[set_key] = encode_steady(set_key, rs, rs.replica[rs.leader])  # type: ignore[index]
            unfigured.add(set_key)
            return data

        save_pieces.sparse_to_fields(out, raw, rowed, records, status_of)
        if unfigured:
            hot.figured = [k for k in hot.figured if k not in unfigured]
    return out


def retention(topics: dict[str, TopicTable]) -> int:
    """The records a partition keeps below HW: ``REPLICATION_LOG_RETENTION``, or less when
    the topics' partitions together would retain more ids than
    ``REPLICATION_RETAINED_IDS`` (core.replication.compaction.retention_for)."""
    return retention_for(partition_count(topics), settings.REPLICATION_LOG_RETENTION,
                         settings.REPLICATION_RETAINED_IDS)


def _compact(rs: ReplicaSet, ref: Replica, retain: int, step: int) -> list[int]:
    """Compact like the core (``ref``: the set's reference replica); return the record
    ids it released (their values go too)."""
    # The core's own cut, found here to copy the released ids before they vanish.
    cut = compaction_cut(rs, ref.start, retain, step)
    if cut is None:
        return []
    released = ref.log[:cut - ref.start]
    compact_at(rs, ref, cut)
    return released


def _step(retain: int) -> int:
    # Chunks of a tenth of the retention: each pass rewrites the compacted prefix.
    return max(1, retain // 10)
