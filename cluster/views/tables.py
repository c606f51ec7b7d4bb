"""Rows for the seed-shaped tables and the skew cells pages show."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cluster.core.assignment import leader_follower_counts
from cluster.selectors import NO_RACK, SpuStats

UNREGISTERED = "(unregistered)"
SKEW_WARN, SKEW_BAD = 0.10, 0.20


@dataclass(frozen=True)
class Cell:
    text: str
    css: str = ""


def skew_cell(value: float | None) -> Cell:
    """(count - avg) / avg, amber from 10% and red from 20% either way."""
    if value is None:
        return Cell("–", "muted")
    size = round(abs(value), 9)  # 2 / (5/3) - 1 must count as 20%, not 19.999…%
    css = "skew-bad" if size >= SKEW_BAD else "skew-warn" if size >= SKEW_WARN else "skew-ok"
    return Cell(f"{value:+.0%}", css)


def share_cell(value: float | None) -> Cell:
    if value is None:
        return Cell("–", "muted")
    css = "skew-ok" if value >= 0.9 else "skew-warn" if value >= 0.5 else "skew-bad"
    return Cell(f"{value:.0%}", css)


def spu_row(spu: SpuStats) -> dict[str, object]:
    return {"spu": spu, "leader_skew": skew_cell(spu.leader_skew),
            "replica_skew": skew_cell(spu.replica_skew),
            "preferred_share": share_cell(spu.preferred_share)}


@dataclass
class MapTable:
    """000's Stage 3 table: per partition, running [leaders] followers per rack."""
    racks: list[str]
    rows: list[dict[str, object]]
    leaders: list[int]
    followers: list[int]
    spus: list[dict[str, object]]


def map_table(replica_map: Sequence[Sequence[int]], rack_of: Mapping[int, str],
              max_rows: int | None = None) -> MapTable:
    """Totals always cover the whole map; ``max_rows`` only shortens the listing."""
    racks = _rack_order(replica_map, rack_of)
    running = {rack: [0, 0] for rack in racks}
    rows = []
    for pid, replicas in enumerate(replica_map):
        for position, spu in enumerate(replicas):
            running[_rack(spu, rack_of)][0 if position == 0 else 1] += 1
        if max_rows is None or pid < max_rows:
            rows.append({"id": pid, "replicas": list(replicas),
                         "racks": [tuple(running[r]) for r in racks]})
    return MapTable(racks, rows, [running[r][0] for r in racks],
                    [running[r][1] for r in racks], _spu_rows(replica_map, rack_of))


def _rack(spu: int, rack_of: Mapping[int, str]) -> str:
    if spu not in rack_of:
        return UNREGISTERED
    return rack_of[spu] or NO_RACK


def _rack_order(replica_map: Sequence[Sequence[int]], rack_of: Mapping[int, str]) -> list[str]:
    # The seed lists racks largest first (Stage 1 order), ties by name.
    sizes: dict[str, int] = {}
    for spu in rack_of:
        sizes[_rack(spu, rack_of)] = sizes.get(_rack(spu, rack_of), 0) + 1
    used = {_rack(s, rack_of) for replicas in replica_map for s in replicas}
    return sorted(used, key=lambda r: (-sizes.get(r, 0), r))


def _spu_rows(replica_map: Sequence[Sequence[int]],
              rack_of: Mapping[int, str]) -> list[dict[str, object]]:
    counts = leader_follower_counts([list(r) for r in replica_map])
    return [{"id": spu, "rack": _rack(spu, rack_of), "leaders": leaders,
             "followers": followers}
            for spu, (leaders, followers) in sorted(counts.items())]  # type: ignore[arg-type]
