"""Small clusters for the self-healing core's tests."""
from __future__ import annotations

from healing.core import PartitionView, Snapshot, SpuView

RACKS = {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"}


def spus(down: tuple[int, ...] = (), racks: dict[int, str | None] | None = None
         ) -> tuple[SpuView, ...]:
    racks = RACKS if racks is None else racks
    return tuple(SpuView(i, rack, i not in down) for i, rack in sorted(racks.items()))


def partitions(layout: list[tuple[int, ...]], topic: str = "t", factor: int | None = None,
               lrs: list[tuple[int, ...]] | None = None) -> tuple[PartitionView, ...]:
    return tuple(PartitionView(topic, p, reps, (lrs[p] if lrs else reps), reps[0] if reps else None,
                               factor if factor is not None else len(reps))
                 for p, reps in enumerate(layout))


def snapshot(layout: list[tuple[int, ...]], down: tuple[int, ...] = (), at_ms: int = 0,
             racks: dict[int, str | None] | None = None, **kw) -> Snapshot:
    return Snapshot(spus(down, racks), partitions(layout, **kw), at_ms)


# Every partition spans racks a, b and c (the layout of a rack-aware assignment).
SPREAD = [(0, 2, 4), (2, 4, 1), (4, 1, 3), (1, 3, 5), (3, 5, 0), (5, 0, 2)]
