"""Applying a what-if scenario, and building grids of scenarios."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from planner.core.model import Cluster, PlanError, Scenario, Spu


@dataclass(frozen=True)
class Effective:
    """The cluster as the scenario leaves it: who may hold replicas, and RFs."""

    spus: tuple[Spu, ...]
    removed: frozenset[int]
    replication: Mapping[str, int]
    every_spu: Mapping[int, Spu]

    @property
    def ids(self) -> tuple[int, ...]:
        return tuple(s.id for s in self.spus)


def apply_scenario(cluster: Cluster, scenario: Scenario) -> Effective:
    every = {s.id: s for s in cluster.spus}
    for spu in scenario.add_spus:
        if spu.id in every:
            raise PlanError(f"SPU {spu.id} already exists")
        every[spu.id] = spu
    removed = _removed_ids(cluster, scenario)
    eligible = tuple(sorted((s for s in every.values() if s.id not in removed),
                            key=lambda s: s.id))
    replication = _replication(cluster, scenario, len(eligible))
    return Effective(eligible, frozenset(removed), replication, every)


def _removed_ids(cluster: Cluster, scenario: Scenario) -> set[int]:
    known = {s.id for s in cluster.spus}
    for spu_id in scenario.remove_spus:
        if spu_id not in known:
            raise PlanError(f"cannot remove unknown SPU {spu_id}")
    racks = {s.rack for s in cluster.spus if s.rack is not None}
    for rack in scenario.lose_racks:
        if rack not in racks:
            raise PlanError(f"cannot lose unknown rack {rack!r}")
    lost = set(scenario.lose_racks)
    return set(scenario.remove_spus) | {s.id for s in cluster.spus if s.rack in lost}


def _replication(cluster: Cluster, scenario: Scenario, spu_count: int) -> dict[str, int]:
    wanted = {t.name: t.replication for t in cluster.topics}
    for name, rf in scenario.replication:
        if name not in wanted:
            raise PlanError(f"cannot change replication of unknown topic {name!r}")
        if rf < 1:
            raise PlanError(f"topic {name}: replication factor must be at least 1")
        wanted[name] = rf
    for name, rf in wanted.items():
        if rf > spu_count:
            raise PlanError(f"topic {name}: replication {rf} needs "
                            f"{rf - spu_count} more SPUs")
    return wanted


def single_removals(cluster: Cluster) -> list[Scenario]:
    """Decommission each SPU alone."""
    return [Scenario(name=f"remove-spu-{s.id}", remove_spus=(s.id,))
            for s in sorted(cluster.spus, key=lambda s: s.id)]


def rack_losses(cluster: Cluster) -> list[Scenario]:
    racks = sorted({s.rack for s in cluster.spus if s.rack is not None})
    return [Scenario(name=f"lose-rack-{r}", lose_racks=(r,)) for r in racks]


# The standard grid adds 1..up_to SPUs per rack; every shell refuses more (scenarios grow
# as racks x up_to, each a full plan).
MAX_UP_TO = 10


def rack_additions(cluster: Cluster, up_to: int) -> list[Scenario]:
    """Add 1..up_to new SPUs to each rack (ids continue after the largest)."""
    racks = sorted({s.rack for s in cluster.spus if s.rack is not None}) or [None]
    first = max((s.id for s in cluster.spus), default=-1) + 1
    scenarios = []
    for rack in racks:
        for count in range(1, up_to + 1):
            new = tuple(Spu(first + i, rack) for i in range(count))
            scenarios.append(Scenario(name=f"add-{count}-to-{rack}", add_spus=new))
    return scenarios


def standard_grid(cluster: Cluster, up_to: int = 3) -> list[Scenario]:
    """Every single-SPU removal, every rack loss, adding 1..up_to SPUs per rack."""
    return [*single_removals(cluster), *rack_losses(cluster),
            *rack_additions(cluster, up_to)]
