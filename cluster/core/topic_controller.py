"""The topic controller of the SC (003) as a pure function.

``reconcile_topic`` walks one topic through its resolutions as far as the
cluster allows in one pass: Init -> Pending | InvalidConfig, then
Pending | InsufficientResources -> Provisioned | InsufficientResources.
It returns the decision and the transitions it made so the shell can store
the outcome and log each step; it never touches a store itself.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum

from cluster.core.assignment import (AssignmentError, ReplicaMap, SpuPlacement,
                                     assign)
from cluster.core.manual_assignment import MapProblem, cluster_problems
from cluster.core.names import name_problem


class TopicResolution(str, Enum):
    INIT = "Init"
    PENDING = "Pending"
    INSUFFICIENT_RESOURCES = "InsufficientResources"
    INVALID_CONFIG = "InvalidConfig"
    PROVISIONED = "Provisioned"


MAX_PARTITIONS = 100_000
MAX_REPLICATION = 64
# A topic's lag limit is a 32-bit count, like Kafka's integer topic configs.
MAX_LAG = 2**31 - 1


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int
    replication: int
    ignore_racks: bool = False
    manual_map: ReplicaMap | None = None


@dataclass(frozen=True)
class TopicDecision:
    resolution: TopicResolution
    reason: str = ""
    replica_map: ReplicaMap = field(default_factory=list)
    start_index: int | None = None
    """Where a computed map started; None for manual maps and failures."""
    problems: tuple[MapProblem, ...] = ()
    """For a refused manual map: each problem with its partition and rule."""
    transitions: tuple[tuple[TopicResolution, TopicResolution], ...] = ()

    @property
    def indexes_used(self) -> int:
        return len(self.replica_map) if self.start_index is not None else 0


def spec_problems(spec: TopicSpec) -> list[tuple[str, str]]:
    """Parameter validation of the Modify Topic step: (field, message) pairs."""
    problems = [("name", p) for p in [name_problem(spec.name)] if p]
    if spec.manual_map is not None:
        return problems
    if not 1 <= spec.partitions <= MAX_PARTITIONS:
        problems.append(("partitions", f"partitions must be between 1 and {MAX_PARTITIONS}"))
    if not 1 <= spec.replication <= MAX_REPLICATION:
        problems.append(("replication",
                         f"replication factor must be between 1 and {MAX_REPLICATION}"))
    return problems


def reconcile_topic(spec: TopicSpec, current: TopicResolution,
                    spus: Sequence[SpuPlacement], cursor: int) -> TopicDecision:
    """Advance a topic from ``current`` given the registered SPUs."""
    steps: list[tuple[TopicResolution, TopicResolution]] = []
    state = current
    if state in (TopicResolution.INIT, TopicResolution.INVALID_CONFIG):
        problems = spec_problems(spec)
        if problems:
            return _decide(steps, state, TopicResolution.INVALID_CONFIG,
                           reason="; ".join(message for _, message in problems))
        steps.append((state, TopicResolution.PENDING))
        state = TopicResolution.PENDING
    if state is TopicResolution.PROVISIONED:
        return TopicDecision(state)
    if spec.manual_map is not None:
        return _provision_manual(spec, state, spus, steps)
    return _provision_computed(spec, state, spus, cursor, steps)


def _provision_manual(spec: TopicSpec, state: TopicResolution,
                      spus: Sequence[SpuPlacement],
                      steps: list) -> TopicDecision:
    problems = cluster_problems(spec.manual_map or [], [s.id for s in spus])
    if problems:
        return _decide(steps, state, TopicResolution.INVALID_CONFIG,
                       reason="; ".join(str(p) for p in problems), problems=tuple(problems))
    return _decide(steps, state, TopicResolution.PROVISIONED,
                   replica_map=[list(r) for r in spec.manual_map or []])


def _provision_computed(spec: TopicSpec, state: TopicResolution,
                        spus: Sequence[SpuPlacement], cursor: int,
                        steps: list) -> TopicDecision:
    ordered = sorted(spus, key=lambda s: s.id)
    if len(ordered) < spec.replication:
        missing = spec.replication - len(ordered)
        return _decide(steps, state, TopicResolution.INSUFFICIENT_RESOURCES,
                       reason=f"need {missing} more SPU{'s' if missing > 1 else ''}"
                              f" (replication {spec.replication}, "
                              f"{len(ordered)} registered)")
    try:
        replica_map = assign(ordered, spec.partitions, spec.replication,
                             start=cursor, ignore_racks=spec.ignore_racks)
    except AssignmentError as exc:
        return _decide(steps, state, TopicResolution.INVALID_CONFIG, reason=str(exc))
    return _decide(steps, state, TopicResolution.PROVISIONED,
                   replica_map=replica_map, start_index=cursor)


def _decide(steps: list, state: TopicResolution, target: TopicResolution,
            **fields: object) -> TopicDecision:
    if state is not target:
        steps.append((state, target))
    return TopicDecision(target, transitions=tuple(steps), **fields)  # type: ignore[arg-type]


WAITING_FOR_SPUS = frozenset({TopicResolution.PENDING, TopicResolution.INSUFFICIENT_RESOURCES})
"""Resolutions that an added SPU may change (003, Topic Controller: Add SPU)."""


REVISITED_ON_CLUSTER_CHANGE = WAITING_FOR_SPUS | {TopicResolution.INVALID_CONFIG}
"""003's Add SPU set, plus InvalidConfig: a map refused for the cluster (SPUs that
mix racked and unracked, or a manual map naming a missing SPU) may fit a changed
cluster. A spec problem stays InvalidConfig when revisited."""


def topics_to_revisit(resolutions: dict[str, TopicResolution]) -> list[str]:
    """Add SPU: the topics whose resolution may change with more SPUs."""
    return sorted(name for name, res in resolutions.items() if res in WAITING_FOR_SPUS)
