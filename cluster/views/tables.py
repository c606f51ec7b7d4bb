"""Rows for the seed-shaped tables and the skew cells pages show."""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from itertools import chain
from dataclasses import dataclass

# The cells live in cluster/cells.py (the live projection sends them too); the pages
# name them here, beside the tables they fill.
from cluster.cells import (Cell, racks_down, share_cell, skew_cell,  # noqa: F401
                           spu_row, status_cell)
from cluster.selectors.stats import NO_RACK

UNREGISTERED = "(unregistered)"


@dataclass
class MapTable:
    """000's Stage 3 table: per partition, running [leaders] followers per rack."""
    racks: list[str]
    rows: list[dict[str, object]]
    leaders: list[int]
    followers: list[int]
    spus: list[dict[str, object]]


def map_table(replica_map: Sequence[Sequence[int]], rack_of: Mapping[int, str],
              max_rows: int | None = None,
              counts: Mapping[int, tuple[int, int]] | None = None) -> MapTable:
    """Totals always cover the whole map; ``max_rows`` only shortens the listing.
    ``counts`` ((leaders, followers) per SPU of the whole map) lets ``replica_map``
    be the listed rows alone: a stored topic's counts are kept, not recounted."""
    counts = _spu_counts(replica_map) if counts is None else counts
    racks = _rack_order(counts, rack_of)
    totals = {rack: [0, 0] for rack in racks}
    for spu, (leaders, followers) in counts.items():
        totals[_rack(spu, rack_of)][0] += leaders
        totals[_rack(spu, rack_of)][1] += followers
    shown = replica_map if max_rows is None else replica_map[:max_rows]
    return MapTable(racks, _running_rows(shown, racks, rack_of),
                    [totals[r][0] for r in racks], [totals[r][1] for r in racks],
                    _per_spu(counts, rack_of))


def _per_spu(counts: Mapping[int, tuple[int, int]],
             rack_of: Mapping[int, str]) -> list[dict[str, object]]:
    """Every registered SPU, those the map leaves out at 0: the imbalance a preview shows."""
    every = {**{spu: (0, 0) for spu in rack_of}, **counts}
    return [{"id": spu, "rack": _rack(spu, rack_of), "leaders": leaders,
             "followers": followers, "unused": leaders + followers == 0}
            for spu, (leaders, followers) in sorted(every.items())]


def _spu_counts(replica_map: Sequence[Sequence[int]]) -> dict[int, tuple[int, int]]:
    """(leaders, followers) per SPU; Counters run in C, a per-replica loop took 0.6 s at 100,000."""
    leaders = Counter(replicas[0] for replicas in replica_map if replicas)
    hosted = Counter(chain.from_iterable(replica_map))
    return {spu: (leaders[spu], hosted[spu] - leaders[spu]) for spu in hosted}


def _running_rows(shown: Sequence[Sequence[int]], racks: list[str],
                  rack_of: Mapping[int, str]) -> list[dict[str, object]]:
    running = {rack: [0, 0] for rack in racks}
    rows = []
    for pid, replicas in enumerate(shown):
        for position, spu in enumerate(replicas):
            running[_rack(spu, rack_of)][0 if position == 0 else 1] += 1
        rows.append({"id": pid, "replicas": list(replicas),
                     "racks": [tuple(running[r]) for r in racks]})
    return rows


def _rack(spu: int, rack_of: Mapping[int, str]) -> str:
    if spu not in rack_of:
        return UNREGISTERED
    return rack_of[spu] or NO_RACK


def _rack_order(counts: Mapping[int, object], rack_of: Mapping[int, str]) -> list[str]:
    # The seed lists racks largest first (Stage 1 order), ties by name.
    sizes: dict[str, int] = {}
    for spu in rack_of:
        sizes[_rack(spu, rack_of)] = sizes.get(_rack(spu, rack_of), 0) + 1
    used = {_rack(spu, rack_of) for spu in counts}
    return sorted(used, key=lambda r: (-sizes.get(r, 0), r))
