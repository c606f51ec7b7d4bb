"""The state one topic's placement works on, shared by ``rebalance`` (which drops and
refills replicas) and ``chains`` (which fills a partition through a chain of hand-overs).

Its own module so that both import it and neither imports the other (issue 32: no
import circle): the task, its search budget and rack spread, the mutable ``Work`` and
the SPUs below quota (``Deficits``).
"""
from __future__ import annotations

from bisect import insort
from collections import Counter
from dataclasses import dataclass
from itertools import chain
from typing import Iterator, Mapping

from planner.core.model import ReplicaMap
from planner.core.placement_flow import affordable
from planner.core.spread import SpreadRule, full_groups


@dataclass(frozen=True)
class TopicTask:
    topic: str
    current: ReplicaMap
    replication: int
    # Eligible SPU -> replica quota; SPUs absent here are removed.
    quota: Mapping[int, int]
    # SPU -> anti-affinity group, or None when anti-affinity is not enforced.
    group_of: Mapping[int, str] | None
    # Bytes per partition where known: among equally good replicas to move,
    # the smaller partition's goes.
    sizes: tuple[int, ...] | None = None
    # Most replicas of one partition in one group, and how many groups there
    # are (0: count them from ``group_of``); see ``spread``.
    group_cap: int = 1
    group_count: int = 0
    # Operation budget of the hand-over search (offers listed and scanned), None for
    # ``search_allowance``: past it the refill stops searching (see ``rebalance._closer``).
    search_budget: int | None = None


# The default search budget: per replica of the topic, plus a floor; an operation is
# about half a microsecond here, so a 10,000-partition plan of RF 5 spends at most a
# few seconds. Where the exact flow is affordable it takes over from a stopped search
# (a tenth of a second for a few hundred partitions), so the search gets a tenth.
OPERATIONS_PER_REPLICA = 60
OPERATIONS_FLOOR = 50_000
FLOW_SHARE = 10


def search_allowance(task: TopicTask) -> int:
    if task.search_budget is not None:
        return task.search_budget
    allowance = OPERATIONS_FLOOR + OPERATIONS_PER_REPLICA * task.replication * len(task.current)
    cheap = affordable(len(task.current), task.quota)
    return allowance // FLOW_SHARE if cheap else allowance


def task_rule(task: TopicTask) -> SpreadRule:
    """The rack spread a topic's partitions must reach."""
    groups = task.group_count
    if not groups:
        key = task.group_of if task.group_of is not None else {s: s for s in task.quota}
        groups = len({key[s] for s in task.quota})
    return SpreadRule(task.group_cap, min(task.replication, groups))


class Work:
    """Mutable state of one topic's placement."""

    def __init__(self, task: TopicTask) -> None:
        self.task = task
        self.quota = task.quota
        self.groups = task.group_of
        quota = task.quota
        if quota.keys() >= set(chain.from_iterable(task.current)):
            self.kept = list(map(list, task.current))  # no replica on a removed SPU
        else:
            self.kept = [[r for r in reps if r in quota] for reps in task.current]
        self.have = dict.fromkeys(quota, 0)
        self.have.update(Counter(chain.from_iterable(self.kept)))
        # Each partition's replicas before (membership tests only; a tuple of
        # a few ids tests as fast as a set and costs nothing to make).
        self.original = task.current
        self.released: set[int] = set()
        # What two replicas of a partition may not share: the SPU, or its group.
        groups = task.group_of
        self.key = (groups if isinstance(groups, dict) else dict(groups)) if groups is not None \
            else {s: s for s in quota}
        self.cap = task.group_cap
        self.rule = task_rule(task)
        self.allowance, self.spent, self.stopped = search_allowance(task), 0, False
        self.over_quota = False  # a fallback placed a replica above an SPU's quota
        self.fallen: set[int] = set()  # the partitions it placed them in

    def blocked(self, pid: int, leaving: int | None) -> set:
        """Keys and SPUs a newcomer to ``pid`` may not have, once ``leaving`` has left."""
        key = self.key
        if self.cap == 1:
            return {key[r] for r in self.kept[pid] if r != leaving}
        staying = [r for r in self.kept[pid] if r != leaving]
        return full_groups([key[r] for r in staying], self.task.replication,
                           self.rule) | set(staying)

    def excess(self, spu: int) -> int:
        return self.have[spu] - self.quota[spu]

    def group(self, spu: int) -> str | None:
        return None if self.groups is None else self.groups[spu]

    def drop(self, pid: int, spu: int) -> None:
        self.kept[pid].remove(spu)
        self.have[spu] -= 1

    def fits(self, pid: int, spu: int, ignore_groups: bool = False) -> bool:
        reps = self.kept[pid]
        if spu in reps:
            return False
        if self.groups is None or ignore_groups:
            return True
        if self.cap > 1:
            return self.groups[spu] not in self.blocked(pid, None)
        # No replica of the partition in the SPU's group; the scan runs in C.
        return self.groups[spu] not in map(self.groups.__getitem__, reps)

    def add(self, pid: int, spu: int) -> None:
        self.kept[pid].append(spu)
        self.have[spu] += 1



class Deficits:
    """SPUs below quota, most missing first, then by id."""

    def __init__(self, missing: Mapping[int, int]) -> None:
        self.missing = dict(missing)
        self.levels: dict[int, list[int]] = {}
        for spu in sorted(self.missing):
            self.levels.setdefault(self.missing[spu], []).append(spu)

    def __contains__(self, spu: int) -> bool:
        return spu in self.missing

    def __iter__(self) -> Iterator[int]:
        for level in sorted(self.levels, reverse=True):
            yield from self.levels[level]

    def charge(self, spu: int) -> None:
        level = self.missing.pop(spu)
        self.levels[level].remove(spu)
        if not self.levels[level]:
            del self.levels[level]
        if level > 1:
            self.missing[spu] = level - 1
            insort(self.levels.setdefault(level - 1, []), spu)
