"""Plain data of the planner: the cluster, a what-if scenario, options, a plan.

A replica map is a tuple indexed by partition id; each entry is the ordered
SPU ids of that partition, leader first (the format of the replica
assignment spec).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from operator import itemgetter
from typing import Mapping, NamedTuple

Replicas = tuple[int, ...]
ReplicaMap = tuple[Replicas, ...]


class PlanError(ValueError):
    """The input cannot be planned (the message says why)."""


@dataclass(frozen=True)
class Spu:
    id: int
    rack: str | None = None
    weight: float = 1.0

    def __post_init__(self) -> None:
        if self.weight <= 0:
            raise PlanError(f"SPU {self.id}: weight must be positive")


@dataclass(frozen=True)
class Topic:
    name: str
    replicas: ReplicaMap
    # Bytes per partition, index = partition id; None when unknown.
    sizes: tuple[int, ...] | None = None
    # Actual leader per partition (None where unknown); None means the
    # preferred leaders (each first replica) lead.
    leaders: tuple[int | None, ...] | None = None

    @property
    def partitions(self) -> int:
        return len(self.replicas)

    @property
    def replication(self) -> int:
        return len(self.replicas[0]) if self.replicas else 0

    @property
    def current_leaders(self) -> tuple[int, ...]:
        """Who leads each partition now: the actual leader where it is known
        and one of the replicas, else the preferred one."""
        if self.leaders is None:
            return tuple(map(itemgetter(0), self.replicas))
        return tuple(lead if lead in reps else reps[0]
                     for reps, lead in zip(self.replicas, self.leaders))


@dataclass(frozen=True)
class Cluster:
    spus: tuple[Spu, ...]
    topics: tuple[Topic, ...]

    def __post_init__(self) -> None:
        ids = [s.id for s in self.spus]
        if len(set(ids)) != len(ids):
            raise PlanError("SPU ids must be unique")
        names = [t.name for t in self.topics]
        if len(set(names)) != len(names):
            raise PlanError("topic names must be unique")
        known = set(ids)
        for topic in self.topics:
            _check_topic(topic, known)

    def topic(self, name: str) -> Topic:
        for topic in self.topics:
            if topic.name == name:
                return topic
        raise KeyError(name)


def _check_topic(topic: Topic, known: set[int]) -> None:
    rf = topic.replication
    for pid, replicas in enumerate(topic.replicas):
        if len(replicas) != rf or rf == 0:
            raise PlanError(f"topic {topic.name} partition {pid} has {len(replicas)} "
                            f"replicas where partition 0 has {rf}: every partition "
                            f"needs the same, non-zero replica count")
        if len(set(replicas)) != len(replicas):
            raise PlanError(f"topic {topic.name} partition {pid}: duplicate SPU")
        unknown = [r for r in replicas if r not in known]
        if unknown:
            raise PlanError(f"topic {topic.name} partition {pid}: unknown SPU {unknown[0]}")
    if topic.sizes is not None and len(topic.sizes) != topic.partitions:
        raise PlanError(f"topic {topic.name}: one size per partition expected")
    if topic.leaders is not None and len(topic.leaders) != topic.partitions:
        raise PlanError(f"topic {topic.name}: one leader per partition expected")


@dataclass(frozen=True)
class Scenario:
    """A what-if applied to the current cluster before planning."""

    name: str = "rebalance"
    add_spus: tuple[Spu, ...] = ()
    remove_spus: tuple[int, ...] = ()
    lose_racks: tuple[str, ...] = ()
    # (topic, new replication factor) pairs.
    replication: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class Options:
    anti_affinity: bool = True
    balance_leaders: bool = True
    optimise_order: bool = True
    # Operations each topic's placement search may spend (None: in proportion to the
    # topic, ``rebalance.search_allowance``); a count, not a clock, so plans repeat.
    search_budget: int | None = None


class Move(NamedTuple):
    """One partition whose ordered replica list changes. A named tuple: a
    large plan holds hundreds of thousands (a tuple is less than half the
    memory of a frozen dataclass instance, and quicker to make)."""

    topic: str
    partition: int
    before: Replicas
    after: Replicas
    added: Replicas
    removed: Replicas
    leader_change: bool


@dataclass(frozen=True)
class Plan:
    scenario: Scenario
    options: Options
    target: Mapping[str, ReplicaMap]
    moves: tuple[Move, ...]
    metrics: Mapping[str, object]
    before: Mapping[str, object] = field(default_factory=dict)
