"""The planning pipeline: central targets, per-topic work, central ordering.

Cluster-wide balance survives per-topic work because nothing per topic decides
a cluster-wide figure: quotas for every (topic, SPU) are fixed centrally from
replica counts alone (small data), each topic is then placed independently
against its quotas, and leaders (a cluster-wide matching) and the follower
order (a single pass with cluster-wide counters) are chosen centrally from
SPU ids alone. ``mapper`` runs the per-topic steps; the Spark job passes one
that distributes them, so both produce the same plan.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence, TypeVar

from planner.core.leaders import choose_leaders
from planner.core.metrics import (layout_metrics, moves_between, movement_metrics,
                                  topic_lower_bound)
from planner.core.model import Cluster, Options, Plan, ReplicaMap, Replicas, Scenario
from planner.core.order import order_all
from planner.core.quotas import Row, round_rows
from planner.core.rebalance import TopicTask, assign_topic
from planner.core.scenarios import Effective, apply_scenario
from planner.core.targets import TopicShares, all_topic_shares, floor_share, group_key

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
    prep = prepare(cluster, scenario or Scenario(), options or Options())
    topics = {t.name: t for t in cluster.topics}
    counts = mapper(count_replicas, [topics[s.topic].replicas for s in prep.shares])
    quotas = replica_quotas(prep, counts)
    placed = mapper(assign_topic, topic_tasks(prep, quotas))
    return finish(prep, quotas, {s.topic: p for s, p in zip(prep.shares, placed)})


def count_replicas(replica_map: ReplicaMap) -> dict[int, int]:
    counts: dict[int, int] = {}
    for reps in replica_map:
        for spu in reps:
            counts[spu] = counts.get(spu, 0) + 1
    return counts


def replica_quotas(prep: Prepared, counts: Sequence[Mapping[int, int]]) -> dict[str, dict[int, int]]:
    rows = [Row(s.topic, s.total, s.shares, s.group_of, c) for s, c in zip(prep.shares, counts)]
    return round_rows(rows, prep.cluster_group)


def topic_tasks(prep: Prepared, quotas: Mapping[str, Mapping[int, int]]) -> list[TopicTask]:
    topics = {t.name: t for t in prep.cluster.topics}
    return [TopicTask(s.topic, topics[s.topic].replicas, prep.effective.replication[s.topic],
                      quotas[s.topic], s.group_of) for s in prep.shares]


def leaders_for(prep: Prepared, quotas: Mapping[str, Mapping[int, int]],
                placed: Mapping[str, Sequence[Replicas]]) -> dict[str, tuple[int, ...]]:
    topics = {t.name: t for t in prep.cluster.topics}
    names = [s.topic for s in prep.shares]
    chosen = choose_leaders([placed[n] for n in names],
                            [tuple(r[0] for r in topics[n].replicas) for n in names],
                            [quotas[n] for n in names],
                            [prep.effective.replication[n] for n in names],
                            prep.options.balance_leaders)
    return dict(zip(names, chosen))


def finish(prep: Prepared, quotas: Mapping[str, Mapping[int, int]],
           placed: Mapping[str, Sequence[Replicas]]) -> Plan:
    """Central tail of the pipeline: leaders, follower order, moves, metrics."""
    names = [s.topic for s in prep.shares]
    current = {t.name: t.replicas for t in prep.cluster.topics}
    leaders = leaders_for(prep, quotas, placed)
    target = order_all(names, placed, leaders, current, prep.options.optimise_order)
    moves = moves_between(current, target)
    metrics = {**movement_metrics(moves, prep.cluster.topics, lower_bound(prep)),
               **layout_metrics(target, prep.effective.spus)}
    before = layout_metrics(current, prep.cluster.spus)
    return Plan(prep.scenario, prep.options, target, moves, metrics, before)


def lower_bound(prep: Prepared) -> int:
    """Movement lower bound (defined in ``metrics``): per topic, and at least
    what SPUs below their cluster-wide rounded-down share must receive."""
    topics = {t.name: t for t in prep.cluster.topics}
    per_topic = sum(topic_lower_bound(topics[s.topic], s, prep.effective.replication[s.topic])
                    for s in prep.shares)
    share: dict[int, float] = {}
    for s in prep.shares:
        for spu, q in s.shares.items():
            share[spu] = share.get(spu, 0.0) + q
    held: dict[int, int] = {}
    for topic in prep.cluster.topics:
        for spu, count in count_replicas(topic.replicas).items():
            held[spu] = held.get(spu, 0) + count
    cluster_gap = sum(max(0, floor_share(q) - held.get(spu, 0)) for spu, q in share.items())
    return max(per_topic, cluster_gap)
