"""Replica and leader counts of a layout, per SPU and per topic, for before/after maps."""
from __future__ import annotations

from typing import Mapping, NamedTuple

from planner.core.model import ReplicaMap


class SpuLoad(NamedTuple):
    replicas: int
    leaders: int


def spu_loads(layout: Mapping[str, ReplicaMap]) -> dict[int, SpuLoad]:
    """Replicas and leaders per SPU; an SPU holding nothing is absent."""
    replicas: dict[int, int] = {}
    leaders: dict[int, int] = {}
    for replica_map in layout.values():
        for reps in replica_map:
            if reps:
                leaders[reps[0]] = leaders.get(reps[0], 0) + 1
            for spu in reps:
                replicas[spu] = replicas.get(spu, 0) + 1
    return {spu: SpuLoad(n, leaders.get(spu, 0)) for spu, n in replicas.items()}


def topic_spu_replicas(layout: Mapping[str, ReplicaMap]) -> dict[str, dict[int, int]]:
    """Replicas of each topic on each SPU."""
    out: dict[str, dict[int, int]] = {}
    for name, replica_map in layout.items():
        counts = out.setdefault(name, {})
        for reps in replica_map:
            for spu in reps:
                counts[spu] = counts.get(spu, 0) + 1
    return out
