"""The planning pipeline: central targets, per-topic work, central ordering.

Cluster-wide balance survives per-topic work because nothing per topic decides
a cluster-wide figure: quotas for every (topic, SPU) are fixed centrally from
replica counts alone (small data), each topic is then placed independently
against its quotas, and leaders (a cluster-wide matching) and the follower
order (a single pass with cluster-wide counters) are chosen centrally from
SPU ids alone. ``mapper`` runs the per-topic steps; the Spark job passes one
that distributes them, so both produce the same plan.

A grid plans many scenarios of one cluster, so what depends on the current
layout alone (replica counts, its metrics) is computed once per cluster
(``current_facts``), and a topic whose replicas already sit exactly on its
quotas is not placed again: placement would keep every replica.
"""
from __future__ import annotations

import gc
from collections import Counter
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from functools import lru_cache
from itertools import chain
from typing import Callable, Iterator, Mapping, Sequence, TypeVar

from planner.core.leaders import choose_leaders
from planner.core.metrics import (layout_metrics, moves_between, movement_metrics,
                                  topic_lower_bound)
from planner.core.model import Cluster, Options, Plan, ReplicaMap, Replicas, Scenario
from planner.core.order import order_all
from planner.core.quotas import Row, round_rows
from planner.core.rebalance import TopicTask, assign_topic, task_rule
from planner.core.scenarios import Effective, apply_scenario
from planner.core.spread import Spread, map_spread, secure_counts
from planner.core.targets import (TopicShares, all_topic_shares, floor_share, group_key,
                                  summed_shares)

T = TypeVar("T")
U = TypeVar("U")
Mapper = Callable[[Callable[[T], U], Sequence[T]], list[U]]


def local_map(fn: Callable[[T], U], items: Sequence[T]) -> list[U]:
    return [fn(item) for item in items]


@dataclass(frozen=True)
class Prepared:
    cluster: Cluster
    scenario: Scenario
    options: Options
    effective: Effective
    shares: tuple[TopicShares, ...]

    @property
    def cluster_group(self) -> dict[int, str]:
        return {s.id: group_key(s) for s in self.effective.spus}


def prepare(cluster: Cluster, scenario: Scenario, options: Options) -> Prepared:
    effective = apply_scenario(cluster, scenario)
    shapes = [(t.name, t.partitions, effective.replication[t.name])
              for t in sorted(cluster.topics, key=lambda t: t.name)]
    shares = all_topic_shares(shapes, effective.spus, options.anti_affinity)
    return Prepared(cluster, scenario, options, effective, tuple(shares))


def plan(cluster: Cluster, scenario: Scenario | None = None, options: Options | None = None,
         mapper: Mapper = local_map) -> Plan:
    """The minimal-movement balanced plan for ``scenario`` applied to ``cluster``."""
    # Only in-process: a distributed mapper talks to its cluster meanwhile.
    with no_cycle_collection() if mapper is local_map else nullcontext():
        prep = prepare(cluster, scenario or Scenario(), options or Options())
        facts = current_facts(cluster)
        quotas = replica_quotas(prep, [facts.counts[s.topic] for s in prep.shares], facts)
        tasks = topic_tasks(prep, quotas)
        moving = [t for t in tasks if not already_placed(t, facts)]
        placed = {t.topic: t.current for t in tasks}
        placed.update(zip((t.topic for t in moving), mapper(assign_topic, moving)))
        return finish(prep, quotas, placed)


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Pause the cyclic garbage collector while planning. A large plan makes
    millions of lists, dicts and sets and no reference cycles; the collector
    would rescan the growing heap dozens of times (about a tenth of a
    million-partition plan). Reference counting still frees everything."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass(frozen=True)
class Current:
    """What the current layout alone decides; shared by every scenario of a grid."""

    counts: Mapping[str, Mapping[int, int]]
    # Per topic, how its worst partitions spread over racks.
    spread: Mapping[str, Spread]
    before: Mapping[str, object]


@lru_cache(maxsize=2)
def current_facts(cluster: Cluster) -> Current:
    group = {s.id: group_key(s) for s in cluster.spus}
    spread = {t.name: map_spread(t.replicas, group) for t in cluster.topics}
    layout = {t.name: t.replicas for t in cluster.topics}
    counts = {t.name: count_replicas(t.replicas) for t in cluster.topics}
    crowded = {name for name, worst in spread.items() if worst.most_in_one > 1}
    return Current(counts, spread, layout_metrics(layout, cluster.spus, actual_leaders(cluster),
                                                  counts, crowded))


def actual_leaders(cluster: Cluster) -> dict[str, tuple[int, ...]]:
    return {t.name: t.current_leaders for t in cluster.topics}


def already_placed(task: TopicTask, facts: Current) -> bool:
    """Placement would keep every replica where it is: nothing on a removed
    SPU, no rack shared under anti-affinity, same replication, counts at quota."""
    counts = facts.counts[task.topic]
    if task.group_of is not None and not facts.spread[task.topic].fine(task_rule(task)):
        return False
    if not task.current or len(task.current[0]) != task.replication:
        return False
    return all(task.quota.get(s) == n for s, n in counts.items()) and \
        sum(task.quota.values()) == sum(counts.values())


def count_replicas(replica_map: ReplicaMap) -> dict[int, int]:
    return dict(Counter(chain.from_iterable(replica_map)))


def replica_quotas(prep: Prepared, counts: Sequence[Mapping[int, int]],
                   facts: Current | None = None) -> dict[str, dict[int, int]]:
    rows = [Row(s.topic, s.total, s.shares, s.group_of, c, _secure(prep, s, facts))
            for s, c in zip(prep.shares, counts)]
    return round_rows(rows, prep.cluster_group)


def _secure(prep: Prepared, shares: TopicShares, facts: Current | None) -> dict[int, int] | None:
    """Replica counts that survive the rack spread, for a topic that breaks it."""
    if facts is None or shares.group_of is None:
        return None
    rf = prep.effective.replication[shares.topic]
    if facts.spread[shares.topic].fine(shares.rule):
        return None
    return secure_counts(prep.cluster.topic(shares.topic).replicas, shares.group_of, rf,
                         shares.rule)


def topic_tasks(prep: Prepared, quotas: Mapping[str, Mapping[int, int]]) -> list[TopicTask]:
    topics = {t.name: t for t in prep.cluster.topics}
    groups = len({group_key(s) for s in prep.effective.spus})
    return [TopicTask(s.topic, topics[s.topic].replicas, prep.effective.replication[s.topic],
                      quotas[s.topic], s.group_of, topics[s.topic].sizes,
                      group_cap=s.group_cap, group_count=groups,
                      search_budget=prep.options.search_budget) for s in prep.shares]


def leaders_for(prep: Prepared, quotas: Mapping[str, Mapping[int, int]],
                placed: Mapping[str, Sequence[Replicas]]) -> dict[str, tuple[int, ...]]:
    topics = {t.name: t for t in prep.cluster.topics}
    names = [s.topic for s in prep.shares]
    chosen = choose_leaders([placed[n] for n in names],
                            [topics[n].current_leaders for n in names],
                            [quotas[n] for n in names],
                            [prep.effective.replication[n] for n in names],
                            prep.options.balance_leaders,
                            {s.id: s.weight for s in prep.effective.spus})
    return dict(zip(names, chosen))


def finish(prep: Prepared, quotas: Mapping[str, Mapping[int, int]],
           placed: Mapping[str, Sequence[Replicas]]) -> Plan:
    """Central tail of the pipeline: leaders, follower order, moves, metrics."""
    names = [s.topic for s in prep.shares]
    current = {t.name: t.replicas for t in prep.cluster.topics}
    leaders = leaders_for(prep, quotas, placed)
    target = order_all(names, placed, leaders, current, prep.options.optimise_order)
    moves = moves_between(current, target, actual_leaders(prep.cluster))
    stopped = sum(bool(getattr(placed[n], "stopped_early", False)) for n in names)
    metrics = {**movement_metrics(moves, prep.cluster.topics, lower_bound(prep), stopped),
               **layout_metrics(target, prep.effective.spus)}
    before = current_facts(prep.cluster).before
    return Plan(prep.scenario, prep.options, target, moves, metrics, dict(before))


def lower_bound(prep: Prepared) -> int:
    """Movement lower bound (defined in ``metrics``): per topic, and at least
    what SPUs below their cluster-wide rounded-down share must receive."""
    topics = {t.name: t for t in prep.cluster.topics}
    facts = current_facts(prep.cluster)
    rf = prep.effective.replication
    per_topic = sum(topic_lower_bound(topics[s.topic], s, rf[s.topic], facts.counts[s.topic],
                                      not facts.spread[s.topic].fine(s.rule))
                    for s in prep.shares)
    share = summed_shares([s.shares for s in prep.shares])
    held = Counter(chain.from_iterable(chain.from_iterable(t.replicas for t in prep.cluster.topics)))
    cluster_gap = sum(max(0, floor_share(q) - held.get(spu, 0)) for spu, q in share.items())
    return max(per_topic, cluster_gap)

