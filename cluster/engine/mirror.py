"""The store's offsets columns follow the hot state: HW, LEO and per-replica figures.

These advance every tick and are not log entries. A row is written only by a
unit of work whose fencing token is at least the row's (``written_by``): a
holder paused between its Redis commit and this write can never pull a row
back behind a later holder's, and a lower HW that the log decided (an unclean
election) is written like any other. Nothing here "only advances".

The durable floor is not the row's HW but its reservation (``reserved_to``): before
its commit, a unit of work whose LEO would pass a row's reservation raises it to LEO +
a block (``reserve``), so the hot state never gives out an offset the store has not
reserved, and a Redis loss restores each partition to max(hw, reserved_to)
(services/recovery.py). The block is sized to the set's growth in this unit times the
units between two of its row's mirror writes (at least ``RESERVE_MIN``); when the mirror
writes a row whose reservation runs low it raises it too (``_write``), so a steady
producer's reservation grows in the mirror's pass, off the path before a commit.

So the HW/LEO columns may trail. At a bounded rate: rows whose status moved (leader,
LRS, resolution, epoch, replicas: those also reach the store through the log's
projection) are written at once, unless their offsets are the ones this process last
wrote there (``_moved``: a failover moves statuses, seldom offsets); the others in
slices (runs of neighbouring pks, ``slices`` = sets loaded / ``REPLICATION_MIRROR_ROWS``),
one slice by a unit of work that loaded its whole scope (the store, or whole shards) and
at most one every
``REPLICATION_MIRROR_INTERVAL_S`` / ``slices`` of the units' clock, so a row is written
at most once an interval and a unit writes at most one slice. A slice's row is written
when it differs from what this process last wrote of it. Readers that need the offsets
exact read the hot state (``partition list``, consume, live blocks, the partitions API,
the records panel: docs/durability.md). With the interval at 0, every unit writes one
slice (below the budget: every moved row), as before the interval.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from collections.abc import Iterable
from itertools import compress, groupby, repeat
from operator import gt, itemgetter
from typing import Any

from django.conf import settings

from cluster.adapters.hot_state import HotState, Summary
from cluster.adapters.lease import Held
from cluster.adapters.redis_keys import store_namespace
from cluster.adapters.summaries import Saved
from cluster.core.replication import Key
from cluster.engine.mirror_rows import stored_shape, write_offsets, write_reserved
from cluster.models import Partition
from cluster.selectors.sql import in_lists

Row = tuple[int, Key, Summary]
# What is kept of the rows starts over past this many (at 400,000 a process stepping
# 1,000,000 read every reservation again after every unit: ``_bound_kept``).
MAX_ROWS_KEPT = 2_000_000
# The smallest block a reservation grows by: a partition produced to a record at a time
# writes its row once every this many records.
RESERVE_MIN = 64
_topic, _index = itemgetter(0), itemgetter(1)  # of a key
_leo = itemgetter(4)  # of a summary: the leader's LEO, None without a leader
# The fewest changed sets whose reservations are kept in their order (``_candidates``).
_ALIGN_MIN = 1000


def slices_of(hot: HotState) -> int:
    """How many slices the mirror cuts ``hot``'s rows into (1: every moved row, at once)."""
    return math.ceil(len(hot.before) / max(1, settings.REPLICATION_MIRROR_ROWS))


def trails_by_design(hot: HotState) -> bool:
    """Whether the mirror may leave ``hot``'s rows' offsets behind the hot state (the
    store resync then heals only rows ahead of it or whose status differs)."""
    return slices_of(hot) > 1 or settings.REPLICATION_MIRROR_INTERVAL_S > 0


def given_out(s: Summary) -> int:
    """The highest offset a set has given out: its leader's LEO (else its longest log's)."""
    return s.stored_leo()


@dataclass
class OffsetsMirror:
    """What this process's units of work last wrote of the offsets rows, and whose slice
    is next: the engine's own (cluster/engine/engine.py), one per process, so a process
    that starts afresh (or a test that builds another engine) starts with none."""
    # What was last written of each row, by (store, pk); past the bound it starts over.
    written: dict[tuple[str, int], Summary] = field(default_factory=dict)
    # The slice the next unit of work writes, by (store, leases held): shards turn apart.
    cursor: dict[tuple[str, ...], int] = field(default_factory=dict)
    # The sets of each slice, by the topic table they were cut from: walking one slice,
    # not every loaded set, each unit of work (the table changes only with topics).
    slices: dict[tuple[Any, ...], list[list[tuple[int, Key]]]] = field(default_factory=dict)
    # When the next slice is due, by scope (the units' clock, ms; interval > 0 only).
    due: dict[tuple[str, ...], int] = field(default_factory=dict)
    # Each row's reservation as this process last read or raised it, by (store, topic
    # pk) then partition index, read a topic at a time: at most the row's (reservations
    # only grow), so a stale one costs a write, never an offset.
    reserved: dict[tuple[str, int], dict[int, int]] = field(default_factory=dict)
    # A large unit's changed keys and their reservations in that order, by store, count,
    # first key and topics' pks (``_candidates``): at most the figures in ``reserved``.
    aligned: dict[tuple[Any, ...], tuple[list[Key], list[int]]] = field(default_factory=dict)
    # Rows written since the process started: offsets (by the mirror), reservations
    # raised before a commit (the benchmarks read them).
    rows_written: int = 0
    reservations_written: int = 0

    def forget(self) -> None:
        """Start over, as a new process would: after the store's rows were changed behind
        this process's back (a test's rolled-back transaction), a reservation it holds
        could be above the row's, and no offset may rely on that."""
        for kept in (self.written, self.cursor, self.slices, self.due, self.reserved,
                     self.aligned):
            kept.clear()

    def reserve(self, hot: HotState, after: Saved) -> None:
        """Before the commit of ``hot``'s changed sets (``hot.differs``): raise the
        reservation of every row whose set's LEO passes it, in one write, so the offsets
        the commit gives out are reserved in the store before any reader is told them.

        The rule is applied set by set to the candidates ``_candidates`` names: every set
        whose LEO passes a figure at most its row's reservation as this process knows it,
        so no set that passes its reservation is left out."""
        differs = hot.differs
        if not differs:
            return
        store = store_namespace()
        before, cycle = hot.before, self.cycle(hot)
        positions, seen = self._candidates(hot, after, store)
        grow: list[tuple[int, int]] = []
        raised: list[tuple[dict[int, int], int, int, int]] = []
        tables: dict[str, dict[int, int]] = {}
        for i in positions:
            key = differs[i]
            name, index = key
            table = tables.get(name)
            if table is None:
                table = tables[name] = self._reserved_of(hot, store, name)
            s = after[key]
            top = s[4] if s[4] is not None else s.stored_leo()  # given_out, inlined
            seen[i] = have = table.get(index, 0)
            if top > have and (pk := hot.partition_pk(key)) is not None:
                old = before.get(key)
                # (A set saved as its figures: its LEO at the save before. A set new to this
                # unit, or restored by a loss in it, grows by the smallest block, not its LEO.)
                was = after.leo_before(key)
                if was is None:
                    was = given_out(old) if old else top
                to = top + block(top - was, cycle, pk)
                grow.append((pk, to))
                raised.append((table, index, to, i))
        write_reserved(grow)
        # Only once written: a reservation held here above the row's would let an offset
        # out unreserved.
        for table, index, to, i in raised:
            table[index] = seen[i] = to
        self.reservations_written += len(grow)

    def _candidates(self, hot: HotState, after: Saved,
                    store: str) -> tuple[Iterable[int], list[int]]:
        """The positions in ``hot.differs`` of the sets to check, and the reservations by
        position that ``reserve`` fills in for the next unit.

        A busy tick's changed sets are the same, in the same order, unit after unit: their
        reservations as last seen are kept in that order (``aligned``), and the sets whose
        LEO passes them are found in C-level passes (the LEOs read in one pass over the
        summaries, in place when every set changed), not a lookup per set. What is kept is
        at most the row's reservation as this process knows it (``reserved``: copied from
        it, which only grows, and dropped with it by ``forget``; by the topics' pks, as a
        topic re-created under its name has other rows). A unit whose changed sets are others
        (an SPU's change) starts their order again from the reservations this process knows
        (``_reservations_in_order``); a unit of fewer sets checks every one."""
        differs = hot.differs
        n = len(differs)
        if n < _ALIGN_MIN:
            return range(n), [0] * n
        scope = (store, n, differs[0], *[(name, t["pk"]) for name, t in hot.topics.items()])
        kept = self.aligned.get(scope)
        if kept is None or kept[0] != differs:
            if len(self.aligned) >= 8:
                self.aligned.clear()
            # (Checking every set made every set's summary: 0.4 s at 100,000 partitions.)
            seen = self._reservations_in_order(hot, store, differs)
            self.aligned[scope] = (list(differs), seen)
        else:
            seen = kept[1]
        # The sets saved as their figures come last (unit.py), their LEOs in their figures.
        head = n - len(after.figured)
        summed = after.after
        found = (summed.values() if len(summed) == head
                 else map(summed.__getitem__, differs[:head]))
        tops: list[Any] = list(map(_leo, found)) + after.figured_leos()
        if None in tops:  # sets without a leader: their longest log's
            tops = [given_out(after[key]) if top is None else top
                    for key, top in zip(differs, tops)]
        return compress(range(n), map(gt, tops, seen)), seen

    def _reservations_in_order(self, hot: HotState, store: str, keys: list[Key]) -> list[int]:
        """Each set's row's reservation as this process knows it (0 if none), in order."""
        out: list[int] = []
        for name, group in groupby(keys, _topic):
            table = self._reserved_of(hot, store, name)
            out += map(table.get, map(_index, group), repeat(0))
        return out

    def cycle(self, hot: HotState) -> int:
        """About how many units of work pass between two mirror writes of a row."""
        interval = settings.REPLICATION_MIRROR_INTERVAL_S
        tick = max(0.001, settings.REPLICATION_TICK_S)
        return max(1, slices_of(hot), math.ceil(interval / tick))

    def offsets(self, hot: HotState, after: Saved, held: Held) -> list[Key]:
        """Write the offsets due (module docstring), tagged with the token of the leases
        the unit ``held``; return the key of every set whose summary moved and that has a
        row, written or not (live pages show them all, their summaries read from ``after``:
        pairing 100,000 keys with them at a busy tick cost more than the pages read)."""
        # hot.differs: the sets whose summary differs from ``before`` (entries.changes).
        changed = with_rows(hot, hot.differs)
        store = store_namespace()
        rows = self._due(hot, after, changed, store, held.names)
        self._write(hot, rows, store, held.token)
        return changed

    def _write(self, hot: HotState, rows: list[Row], store: str, token: int) -> None:
        """The rows' offsets, and the reservations of those that run low (less than half
        a block left): raised now, while the rows are written anyway, rather than before
        some later commit."""
        cycle = self.cycle(hot)
        raise_to: list[tuple[int, int]] = []
        raised: list[tuple[dict[int, int], int, int]] = []
        for pk, key, s in rows:
            table = self._reserved_of(hot, store, key[0])
            top, have = given_out(s), table.get(key[1], 0)
            old = hot.before.get(key)
            grow = block(top - (given_out(old) if old else top), cycle, pk)
            if top > 0 and have - top < grow // 2:
                raise_to.append((pk, top + grow))
                raised.append((table, key[1], top + grow))
        write_offsets(rows, token)
        # Not fenced like the offsets (a reservation only grows), so never refused.
        write_reserved(raise_to)
        for table, index, to in raised:  # once written (``reserve``)
            table[index] = max(to, table.get(index, 0))
        self.rows_written += len(rows)
        self.reservations_written += len(raise_to)
        self._bound_kept()
        self.written.update(((store, pk), s) for pk, _, s in rows)

    def _bound_kept(self) -> None:
        """Past ``MAX_ROWS_KEPT``, start over (reservations read again from the store)."""
        for kept, size in ((self.written, len(self.written)),
                           (self.reserved, sum(map(len, self.reserved.values())))):
            if size > MAX_ROWS_KEPT:
                kept.clear()

    def _reserved_of(self, hot: HotState, store: str, topic: str) -> dict[int, int]:
        """The reservations of ``topic``'s rows by index, read once (a topic re-created
        under its name has another pk, hence its own)."""
        table = hot.topics.get(topic)
        if table is None:
            return {}
        scope = (store, table["pk"])
        found = self.reserved.get(scope)
        if found is None:
            self._read_reserved(hot, store, {topic, *map(_topic, hot.differs)})
            found = self.reserved[scope]
        return found

    def _read_reserved(self, hot: HotState, store: str, names: set[str]) -> None:
        """The reservations of the topics ``names`` that are not kept yet, in one query
        (a query a topic was 0.6 ms each: seconds of the first tick of a cluster of
        thousands of topics, whose every set changed)."""
        pks = {hot.topics[n]["pk"] for n in names if n in hot.topics}
        pks -= {pk for kept_store, pk in self.reserved if kept_store == store}
        read: dict[int, dict[int, int]] = {pk: {} for pk in pks}
        for chunk in in_lists(sorted(pks)):
            for topic, index, reserved in Partition.objects.filter(
                    topic_id__in=chunk).values_list("topic_id", "index", "reserved_to"):
                read[topic][index] = reserved
        self.reserved.update(((store, pk), rows) for pk, rows in read.items())

    def _due(self, hot: HotState, after: Saved, changed: list[Key], store: str,
             held: tuple[str, ...]) -> list[Row]:
        """The rows to write: those whose status moved, and one slice's rows that differ
        from what was written, when a slice is due (module docstring); ``after``: the
        unit's summaries (the figured sets' made as read)."""
        pk_of = hot.partition_pk
        slices = max(1, slices_of(hot))  # a unit that loaded no set still has one
        interval_ms = int(settings.REPLICATION_MIRROR_INTERVAL_S * 1000)
        before, written = hot.before, self.written
        if slices <= 1 and interval_ms <= 0:
            return [(pk_of(key), key, after[key]) for key in changed]
        # Walked from the moved sets and the slice, never every changed set: the rest wait.
        rows = self._moved(hot, store)
        scope = (store, *held)
        if interval_ms > 0:
            now = hot.state.clock_ms
            # A unit that loaded part of its scope (a produce's sets) leaves the slices to
            # the next whole one: its sets differ from what was written, so they follow.
            if not hot.complete or now < self.due.get(scope, 0):
                return rows
            self.due[scope] = now + interval_ms // slices
        turn = self.cursor.get(scope, 0) % slices
        self.cursor[scope] = turn + 1
        chosen = {pk for pk, _, _ in rows}
        for pk, key in self._slice(hot, slices, turn):
            if pk in chosen or key not in before:
                continue
            new = after.get(key) or before[key]
            if written.get((store, pk)) != new:
                rows.append((pk, key, new))
        return rows

    def _moved(self, hot: HotState, store: str) -> list[Row]:
        """The rows of the sets whose status moved, but those whose offsets (HW, LEO, each
        replica's) are the ones this process last wrote there: a failover at 100,000
        partitions moves 6,000 statuses and, for most of them, no offset. Those are noted
        as written with their new summary, so no slice writes them again for the status
        alone (the status columns are the log's projection's)."""
        pk_of, after, written = hot.partition_pk, hot.after, self.written
        rows: list[Row] = []
        for key in hot.moved:
            pk = pk_of(key)
            if pk is None:
                continue
            new, old = after[key], written.get((store, pk))
            if (old is not None and old.replicas == new.replicas
                    and stored_shape(old) == stored_shape(new)):
                written[(store, pk)] = new
            else:
                rows.append((pk, key, new))
        return rows

    def _slice(self, hot: HotState, slices: int, turn: int) -> list[tuple[int, Key]]:
        shape = (slices, *[(name, t["pk"], len(t["partitions"]), t["partitions"][-1:][0]
                            if t["partitions"] else None) for name, t in hot.topics.items()])
        cut = self.slices.get(shape)
        if cut is None:
            if len(self.slices) > 16:
                self.slices.clear()
            # Runs of neighbouring pks: a slice's rows share the store's pages (the rows
            # of ``pk % slices`` were each on a page of their own, each read and written).
            rows = sorted((pk, (name, index)) for name, table in hot.topics.items()
                          for index, pk in enumerate(table["partitions"]))
            size = -(-len(rows) // slices)
            cut = self.slices[shape] = [rows[i * size:(i + 1) * size] for i in range(slices)]
        return cut[turn]


def with_rows(hot: HotState, keys: list[Key]) -> list[Key]:
    """``keys`` less those without a partition row (``hot.partition_pk`` None), in order:
    checked a topic at a time (its highest index against its rows), per set only in a
    topic where some set has none."""
    out: list[Key] = []
    for name, run in groupby(keys, _topic):
        found = list(run)
        table = hot.topics.get(name)
        if table and max(map(_index, found)) < len(table["partitions"]):
            out += found
        else:
            out += [key for key in found if hot.partition_pk(key) is not None]
    return out


def block(growth: int, cycle: int, pk: int) -> int:
    """How far past its LEO a row's reservation is raised: twice what the set grew in this
    unit over a mirror cycle, at least RESERVE_MIN; an eighth more or less by partition, so
    sets produced to in step do not all run out at the same unit."""
    return max(RESERVE_MIN, 2 * max(0, growth) * cycle) * (8 + pk % 8) // 8
