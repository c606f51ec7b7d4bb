"""The cluster as the detector reads it: one snapshot of the store (SPUs, partitions, LRS)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.db.models import QuerySet

from cluster.core.spus import SpuResolution
from cluster.core.topic_controller import TopicResolution
from cluster.models import Event, Partition, Spu, Topic
from cluster.ports import applied_offset, partition_rows_moved, store_namespace
from cluster.selectors.sql import in_lists, tuple_parser, with_texts
from healing.core import PartitionView, Snapshot, SpuView


# The partitions last read, by what they were read at: the check runs every few seconds and
# reading 100,000 rows took seconds of a worker each time, though nothing had moved.
@dataclass
class _Kept:
    offset: int                     # the log offset the rows had applied
    topics: tuple[Any, ...]         # the topics they were read for
    partitions: tuple[PartitionView, ...]
    at: dict[tuple[int, int], tuple[int, int]]  # (topic pk, index) -> (position, row id)
    # What runs derived from these rows (``derived``): name -> (other inputs, value, and
    # how many of the patches' views had been counted in ``moved`` when it was made).
    derived: dict[str, tuple[Any, Any, int]] = field(default_factory=dict)
    # The views the patches replaced, in order: (before, now) each; ``dropped``, how many
    # were dropped from the front once every derived value had taken them in.
    moved: list[tuple[PartitionView, PartitionView]] = field(default_factory=list)
    dropped: int = 0

    @property
    def counted(self) -> int:
        return self.dropped + len(self.moved)


_read: dict[str, _Kept] = {}
T = TypeVar("T")
# Past this share of the rows moved, all are read again rather than patched.
PATCH_MAX_SHARE = 0.25


def cluster_snapshot(at_ms: int | None = None) -> Snapshot:
    spus = tuple(SpuView(i, rack or None, res == SpuResolution.ONLINE.value)
                 for i, rack, res in Spu.objects.order_by("id").values_list("id", "rack",
                                                                            "resolution"))
    topics = {pk: (name, factor, not ignore, count, created)
              for pk, name, factor, ignore, count, created in Topic.objects.filter(
                  resolution=TopicResolution.PROVISIONED.value).values_list(
                  "pk", "name", "replication_factor", "ignore_rack_assignment", "partitions",
                  "created_at")}
    return Snapshot(spus, _partitions(topics),
                    at_ms if at_ms is not None else int(time.time() * 1000))


def spus_down_since(at: datetime | None) -> set[int]:
    """SPUs that went down (any resolution but online) since ``at``, even if back now:
    the snapshot shows only where they are, not where they were in between."""
    if at is None:
        return set()
    changes = Event.objects.filter(object_type="spu", operation="resolution", at__gte=at) \
        .exclude(params__to=SpuResolution.ONLINE.value).values_list("object_name", flat=True)
    return {int(name) for name in changes if name.isdigit()}


def _partitions(topics: dict[int, tuple[Any, ...]]) -> tuple[PartitionView, ...]:
    """The partitions' replicas, LRS and leader, read again only where they may have moved.

    Those columns are written by the metadata log's projection alone, in the transaction
    that records the offset it reached; topic create and delete change the topic rows.
    So the same applied offset and the same topics mean the same rows (the same tuple,
    which the detection's memo keys on), and between two offsets only the rows the log's
    entries name have moved (``partition_rows_moved``): a running engine's log moves
    every few seconds (HW checkpoints, a leader here and there), and reading 100,000 rows
    again each time held a worker 1.8 s, 8 s at 300,000."""
    offset, key = applied_offset(), tuple(sorted(topics.items()))
    kept = _read.get(store_namespace())
    if kept is not None and kept.topics == key and kept.offset <= offset:
        if kept.offset == offset:
            return kept.partitions
        moved = partition_rows_moved(kept.offset + 1, offset)
        if moved is not None and len(moved) <= PATCH_MAX_SHARE * len(kept.partitions):
            _patch(kept, moved, topics)
            kept.offset = offset
            return kept.partitions
    parse = tuple_parser()
    partitions, at = [], {}
    for position, (row_id, t, index, replicas, lrs, leader) in enumerate(
            _rows(Partition.objects.filter(topic_id__in=list(topics)))):
        partitions.append(_view(topics[t], index, parse(replicas), parse(lrs), leader))
        at[(t, index)] = (position, row_id)
    _read.clear()  # one store per process in practice; tests switch between several
    _read[store_namespace()] = _Kept(offset, key, tuple(partitions), at)
    return _read[store_namespace()].partitions


def _patch(kept: _Kept, moved: set[tuple[int, int]], topics: dict[int, tuple[Any, ...]]
           ) -> None:
    """Read again the rows ``moved`` names, in place in a new tuple (when any is kept)."""
    found = [kept.at[key] for key in moved if key in kept.at]
    if not found:
        return  # HW checkpoints, SPUs, rows of topics the check does not read
    position_of = dict((row_id, position) for position, row_id in found)
    partitions, parse = list(kept.partitions), tuple_parser()
    for chunk in in_lists(sorted(position_of)):
        for row_id, t, index, replicas, lrs, leader in _rows(
                Partition.objects.filter(id__in=chunk)):
            position = position_of[row_id]
            now = _view(topics[t], index, parse(replicas), parse(lrs), leader)
            if now != partitions[position]:
                kept.moved.append((partitions[position], now))
                partitions[position] = now
    kept.partitions = tuple(partitions)
    _forget_counted(kept)


def _forget_counted(kept: _Kept) -> None:
    """Drop the moved views every derived value took in; past a quarter of the rows, drop
    the derived values instead (made again from the rows is then as cheap)."""
    if len(kept.moved) > PATCH_MAX_SHARE * len(kept.partitions):
        kept.derived.clear()
    low = min((seen for _, _, seen in kept.derived.values()), default=kept.counted)
    del kept.moved[:low - kept.dropped]
    kept.dropped = low


def derived(snapshot: Snapshot, name: str, inputs: Any, compute: Callable[[], T],
            moved: Callable[[T, list[tuple[PartitionView, PartitionView]]], T] | None = None
            ) -> T:
    """``compute()``, or what it gave a run before with equal other ``inputs``: over these
    very rows (the tuple kept while the log names none of them), or over the rows before
    the patches since, brought up to date by ``moved(value, [(view before, view now),
    ...])`` when given.

    The detectors and the LRS members are passes over every partition: at 100,000
    partitions 0.29 s of the 0.36 s a run took every 5 s, always to the same result while
    nothing moved; and 0.8 s of a 1.5 s run whenever a few rows moved (a plan's moves, an
    outage), which ``moved`` makes a pass over those rows."""
    kept = _read.get(store_namespace())
    if kept is None or kept.partitions is not snapshot.partitions:
        return compute()
    found = kept.derived.get(name)
    if found is not None and found[0] == inputs:
        value, seen = found[1], found[2]
        if seen == kept.counted:
            return value
        if moved is not None:
            value = moved(value, kept.moved[seen - kept.dropped:])
            kept.derived[name] = (inputs, value, kept.counted)
            _forget_counted(kept)
            return value
    value = compute()
    kept.derived[name] = (inputs, value, kept.counted)
    _forget_counted(kept)
    return value


def _rows(query: QuerySet[Partition]) -> Iterable[tuple[Any, ...]]:
    """(row id, topic pk, index, replicas text, LRS text, leader) of each row: the JSON
    columns as their text, for ``tuple_parser``."""
    return with_texts(query, "replicas", "lrs").values_list(
        "id", "topic_id", "index", "replicas_text", "lrs_text", "leader")


def _view(topic: tuple[Any, ...], index: int, replicas: tuple[int, ...],
          lrs: tuple[int, ...], leader: int | None) -> PartitionView:
    return PartitionView(topic[0], index, replicas, lrs, leader, topic[1], topic[2])
