"""The store's offsets columns follow the hot state: HW, LEO and per-replica figures.

These advance every tick and are not log entries. A row is written only by a
unit of work whose fencing token is at least the row's (``written_by``): a
holder paused between its Redis commit and this write can never pull a row
back behind a later holder's, and a lower HW that the log decided (an unclean
election) is written like any other. Nothing here "only advances".

At a bounded rate: a unit of work that loaded more than ``REPLICATION_MIRROR_ROWS``
sets writes at once only the rows whose status moved (leader, LRS, resolution,
epoch, replicas: those also reach the store through the log's projection), and
the offsets of one slice of its sets (``pk % slices``), the next slice at its next
unit of work; a slice's row is written when it differs from what this process last
wrote of it. A row's offsets are then at most ``slices`` units of work of a process
behind the hot state. Readers that need them exact read the hot state (``partition
list``, consume, live blocks: docs/durability.md). Below the budget every moved row
is written, as before.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from cluster.adapters.hot_state import HotState, ReplicaStatus, Summary
from cluster.adapters.lease import Held
from cluster.adapters.redis_keys import store_namespace
from cluster.core.replication import Key
from cluster.models import Partition

Row = tuple[int, Key, Summary]
_MAX_ROWS_KEPT = 400_000


def slices_of(hot: HotState) -> int:
    """How many slices the mirror cuts ``hot``'s rows into (1: every moved row, at once)."""
    return math.ceil(len(hot.before) / max(1, settings.REPLICATION_MIRROR_ROWS))


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

    def offsets(self, hot: HotState, after: dict[Key, Summary], held: Held
                ) -> list[tuple[Key, Summary]]:
        """Write the offsets due (module docstring), tagged with the token of the leases
        the unit ``held``; return (key, summary) of every set whose summary moved, written
        or not (live pages show them all)."""
        # hot.differs: the sets whose summary differs from ``before`` (entries.changes).
        changed = [(key, after[key]) for key in hot.differs if hot.partition_pk(key) is not None]
        store = store_namespace()
        rows = self._due(hot, changed, store, held.names)
        write_offsets(rows, held.token)
        if len(self.written) > _MAX_ROWS_KEPT:
            self.written.clear()
        self.written.update(((store, pk), s) for pk, _, s in rows)
        return changed

    def _due(self, hot: HotState, changed: list[tuple[Key, Summary]], store: str,
             held: tuple[str, ...]) -> list[Row]:
        """The rows to write: every changed one within the budget; past it, those whose
        status moved and the rows of this unit's slice that differ from what was written."""
        pk_of = hot.partition_pk
        slices = slices_of(hot)
        if slices <= 1:
            return [(pk_of(key), key, new) for key, new in changed]
        scope = (store, *held)
        turn = self.cursor.get(scope, 0) % slices
        self.cursor[scope] = turn + 1
        after, before, written = hot.after, hot.before, self.written
        # Walked from the moved sets and the slice, never every changed set: the rest wait.
        rows = [(pk, key, after[key]) for key in hot.moved if (pk := pk_of(key)) is not None]
        chosen = {pk for pk, _, _ in rows}
        for pk, key in self._slice(hot, slices, turn):
            if pk in chosen or key not in before:
                continue
            new = after.get(key) or before[key]
            if written.get((store, pk)) != new:
                rows.append((pk, key, new))
        return rows

    def _slice(self, hot: HotState, slices: int, turn: int) -> list[tuple[int, Key]]:
        shape = (slices, *[(name, t["pk"], len(t["partitions"]), t["partitions"][-1:][0]
                            if t["partitions"] else None) for name, t in hot.topics.items()])
        cut = self.slices.get(shape)
        if cut is None:
            if len(self.slices) > 16:
                self.slices.clear()
            cut = self.slices[shape] = [[] for _ in range(slices)]
            for name, table in hot.topics.items():
                for index, pk in enumerate(table["partitions"]):
                    cut[pk % slices].append((pk, (name, index)))
        return cut[turn]


def write_offsets(rows: list[tuple[int, Key, Summary]], token: int) -> None:
    """One executemany, each row only where ``token`` (its writer's fencing token) is at
    least the row's: bulk_update's CASE chains cost ~20x more at 10,000 rows."""
    if not rows:
        return
    table = Partition._meta.db_table
    sql = (f"UPDATE {table} SET hw = %s, leo = %s, replica_status = %s, written_by = %s "
           f"WHERE id = %s AND written_by <= %s")
    params = [(s.hw, s.stored_leo(), _json_status(s.replicas), token, pk, token)
              for pk, _, s in rows]
    # One transaction: in autocommit each row would be a commit (an fsync on SQLite).
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.executemany(sql, params)


def stored_shape(s: Summary) -> tuple[Any, ...]:
    """A summary as the store's offset columns read back (hw, leo)."""
    return (s.hw, s.stored_leo())


def _json_status(status: tuple[ReplicaStatus, ...]) -> str:
    # Hand-built JSON: json.dumps twice per row was a tenth of a busy tick.
    return "[" + ", ".join(f'{{"spu": {s}, "leo": {leo}, "hw": {hw}}}'
                           for s, leo, hw in status) + "]"
