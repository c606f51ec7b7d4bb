"""A plan whose layout the driver never holds: topics live on the executors.

``plan_distributed`` hands the whole ``Cluster`` to the driver; this path
takes the topics as an RDD of ``Topic`` (generated on the executors, or read
there) and runs the same pipeline as ``planner.core.planner.plan`` in four
jobs, the driver gathering only aggregates:

1. per topic: shape, replicas per SPU and rack spread (collected), and the
   current layout's figures (summed on the executors: ``before``);
2. the driver fixes every (topic, SPU) quota from those counts, exactly as
   in-process; the executors place each topic against its quotas and count
   its leader classes (same replica set, same old leader -> partitions);
3. the driver chooses leaders over the classes (``choose_leaders``, whose
   greedy matching and flow see each class as that many equal partitions);
4. the executors hand each class's leaders to its partitions, order the
   followers, compute moves and figures, and write the moves out.

Differences from in-process, by design: within a class, which partition
gets which of the class's leaders may differ, and the follower order shares
its successor counts within one slice of topics rather than cluster-wide.
Neither changes replicas moved, the lower bound, spreads or rack violations.
"""
from __future__ import annotations

import json
from array import array
from dataclasses import dataclass
from operator import add
from types import SimpleNamespace
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from pyspark import RDD, StorageLevel
from pyspark.sql import SparkSession

from planner.core.leaders import choose_leaders
from planner.core.metrics import moves_between, ratio, topic_lower_bound
from planner.core.model import Options, PlanError, Scenario, Spu, Topic
from planner.core.order import SuccessorCounts, order_topic
from planner.core.planner import already_placed
from planner.core.quotas import Row, full_quota, round_rows_sparse
from planner.core.rebalance import TopicTask, assign_topic
from planner.core.scenarios import apply_scenario
from planner.core.serial import move_to_dict
from planner.core.spread import secure_counts
from planner.core.streamed import (LayoutPart, ShapeCluster, TopicFacts, apply_class_leaders,
                                   check_topic, class_leaders, expand_classes, failover_from,
                                   layout_figures, layout_part, leader_classes, pack_classes,
                                   topic_facts, unpack_classes)
from planner.core.targets import (TopicShares, all_topic_shares, floor_share, group_key,
                                  summed_shares)

DISK = StorageLevel.MEMORY_AND_DISK


@dataclass(frozen=True)
class StreamedPlan:
    """What comes back to the driver: figures, not the layout. ``moves_dir``
    holds the moves as JSON lines (``serial.move_to_dict``), when asked for."""

    scenario: Scenario
    options: Options
    metrics: Mapping[str, object]
    before: Mapping[str, object]
    topics: int
    partitions: int
    moves_dir: str | None


def topics_from_cluster(spark: SparkSession, cluster_topics: Sequence[Topic],
                        slices: int | None = None) -> RDD:
    """An RDD of topics the driver already has (tests, small clusters)."""
    context = spark.sparkContext
    return context.parallelize(list(cluster_topics), slices or 4 * context.defaultParallelism)


def generated_topics(spark: SparkSession, count: int, make: Callable[[int], Topic],
                     slices: int | None = None) -> RDD:
    """Topics ``make(0) .. make(count - 1)``, each built on an executor."""
    context = spark.sparkContext
    return context.parallelize(range(count), slices or 4 * context.defaultParallelism).map(make)


def plan_streamed(spark: SparkSession, spus: Sequence[Spu], topics: RDD,
                  scenario: Scenario | None = None, options: Options | None = None,
                  moves_dir: str | None = None, slices: int | None = None) -> StreamedPlan:
    """The plan of ``planner.plan`` for the cluster of ``spus`` and the
    ``topics`` RDD, its moves written to ``moves_dir`` (a new directory)."""
    context = spark.sparkContext
    scenario, options = scenario or Scenario(), options or Options()
    slices = slices or topics.getNumPartitions()
    spus = tuple(spus)
    group = {s.id: group_key(s) for s in spus}
    ids, rack_of = frozenset(s.id for s in spus), {s.id: s.rack for s in spus}

    # 1. Facts and the current layout's figures.
    known = set(ids)

    def facts_of(topic: Topic):
        try:
            check_topic(topic, known)
        except PlanError as error:  # reported by the driver, not as an executor failure
            return topic.name, None, str(error), None
        facts = topic_facts(topic, group)
        return topic.name, topic, facts, layout_part(topic.name, topic.replicas, ids, rack_of,
                                                     topic.current_leaders, facts.counts)

    current = topics.map(facts_of).persist(DISK)
    bad = current.filter(lambda r: r[1] is None).map(lambda r: r[2]).take(1)
    if bad:
        current.unpersist()
        raise PlanError(bad[0])
    before = _sum_parts(current.map(lambda r: r[3]), ids)
    # Counts travel as int arrays and become dicts keyed by the SPU list's own
    # int objects: ten million (topic, SPU) cells share five thousand keys.
    spu_ids = {s.id: s.id for s in spus}
    facts = {name: TopicFacts(shape, dict(zip(map(spu_ids.__getitem__, keys), values)), spread)
             for name, shape, keys, values, spread in current.map(_packed_facts).collect()}
    if current.count() != len(facts):
        current.unpersist()
        raise PlanError("topic names must be unique")
    layout = current.map(lambda r: (r[0], r[1]))

    # 2. Quotas on the driver, placement on the executors.
    names = sorted(facts)
    effective = apply_scenario(ShapeCluster(spus, tuple(facts[n].shape for n in names)), scenario)
    rf = effective.replication
    shares = all_topic_shares([(n, facts[n].shape.partitions, rf[n]) for n in names],
                              effective.spus, options.anti_affinity)
    groups = len({group_key(s) for s in effective.spus})
    secure = _secure(layout, facts, shares, rf)
    rows = [Row(s.topic, s.total, s.shares, s.group_of, facts[s.topic].counts, secure.get(s.topic))
            for s in shares]
    quotas, sparse = round_rows_sparse(rows, {s.id: group_key(s) for s in effective.spus})
    share = summed_shares([s.shares for s in shares])
    held: dict[int, int] = {}
    for f in facts.values():
        for spu, n in f.counts.items():
            held[spu] = held.get(spu, 0) + n
    cluster_gap = sum(max(0, floor_share(q) - held.get(spu, 0)) for spu, q in share.items())
    partitions = sum(f.shape.partitions for f in facts.values())
    shares_of = {s.topic: s for s in shares}
    del rows, facts, held

    def place(item):
        name, (topic, quota) = item
        s = shares_of_b.value[name]
        replication = rf_b.value[name]
        quota = full_quota(quota, s.shares) if sparse else quota
        task = TopicTask(name, topic.replicas, replication, quota, s.group_of, topic.sizes,
                         group_cap=s.group_cap, group_count=groups)
        facts = topic_facts(topic, group)
        # ``already_placed`` reads the whole layout's facts; this topic's are all it needs.
        own = SimpleNamespace(counts={name: facts.counts}, spread={name: facts.spread})
        placed = task.current if already_placed(task, own) else assign_topic(task)
        bound = topic_lower_bound(topic, s, replication, facts.counts,
                                  not facts.spread.fine(s.rule))
        return name, (topic, placed, bound)

    shares_of_b, rf_b = context.broadcast(shares_of), context.broadcast(dict(rf))
    quota_rdd = context.parallelize(list(quotas.items()), slices)
    del quotas
    placed = layout.join(quota_rdd, slices).map(place).persist(DISK)
    placed.count()
    current.unpersist()

    # 3. Leaders over classes on the driver.
    if options.balance_leaders:
        every = {**spu_ids, **{s.id: s.id for s in effective.spus}}  # new SPUs too
        chosen = _leaders(context, placed, names, effective.spus, slices, every)
        joined = placed.join(chosen, slices)
    else:
        joined = placed.mapValues(lambda v: (v, None))

    # 4. Leaders handed out, followers ordered, moves and figures.
    after_ids = frozenset(s.id for s in effective.spus)
    after_racks = {s.id: s.rack for s in effective.spus}
    optimise = options.optimise_order

    def finish_slice(items: Iterable) -> Iterator:
        counts = SuccessorCounts()
        for name, ((topic, placed_map, bound), split) in sorted(items, key=lambda i: i[0]):
            olds = topic.current_leaders
            if split is None:
                leaders = tuple(old if old in reps else reps[0]
                                for reps, old in zip(placed_map, olds))
            else:
                leaders = apply_class_leaders(placed_map, olds,
                                              leader_classes(placed_map, olds), split)
            target = order_topic(placed_map, leaders, topic.replicas, optimise, counts)
            moves = moves_between({name: topic.replicas}, {name: target}, {name: olds})
            sizes = topic.sizes
            stats = (sum(len(m.added) for m in moves), len(moves),
                     sum(m.leader_change for m in moves), bound,
                     None if sizes is None else sum(len(m.added) * sizes[m.partition]
                                                    for m in moves))
            yield name, moves, stats, layout_part(name, target, after_ids, after_racks)

    results = joined.mapPartitions(finish_slice).persist(DISK)
    stats = results.map(lambda r: r[2]).collect()
    after = _sum_parts(results.map(lambda r: r[3]), after_ids)
    if moves_dir is not None:
        results.flatMap(lambda r: (json.dumps(move_to_dict(m)) for m in r[1])) \
            .saveAsTextFile(moves_dir)
    results.unpersist()
    placed.unpersist()
    shares_of_b.destroy()
    rf_b.destroy()

    moved = sum(s[0] for s in stats)
    bound = max(sum(s[3] for s in stats), cluster_gap)
    sized = [s[4] for s in stats if s[4] is not None]
    metrics = {"replicas_moved": moved, "partitions_changed": sum(s[1] for s in stats),
               "bytes_moved": sum(sized) if sized else None,
               "leader_changes": sum(s[2] for s in stats), "lower_bound": bound,
               "moved_to_lower_bound": ratio(moved, bound), **after}
    return StreamedPlan(scenario, options, metrics, before, len(names), partitions, moves_dir)


def _secure(layout: RDD, facts: Mapping, shares: Sequence[TopicShares],
            rf: Mapping[str, int]) -> dict[str, dict[int, int]]:
    """``planner._secure`` for the topics that break the rack spread (usually
    none: then no job runs)."""
    wanted = {}
    for s in shares:
        if s.group_of is None:
            continue
        if not facts[s.topic].spread.fine(s.rule):
            wanted[s.topic] = (s.group_of, rf[s.topic], s.rule)
    if not wanted:
        return {}
    return dict(layout.filter(lambda kv: kv[0] in wanted)
                .map(lambda kv: (kv[0], secure_counts(kv[1].replicas, *wanted[kv[0]])))
                .collect())


def _packed_facts(record) -> tuple:
    name, _, facts, _ = record
    return (name, facts.shape, array("q", facts.counts.keys()), array("q", facts.counts.values()),
            facts.spread)


def _leaders(context, placed: RDD, names: Sequence[str], spus: Sequence[Spu],
             slices: int, spu_ids: Mapping[int, int]) -> RDD:
    """Per topic, per leader class, (SPU, partitions it leads)."""
    packed = dict(placed.mapValues(
        lambda v: pack_classes(leader_classes(v[1], v[0].current_leaders))).collect())
    lists, olds, sizes = [], [], {}
    for name in names:
        classes = unpack_classes(packed.pop(name), spu_ids)
        reps, old = expand_classes(classes)
        sizes[name] = array("q", (n for _, _, n in classes))
        lists.append(reps)
        olds.append(old)
        del classes
    # Balanced leaders need no quotas or replication once weights are given.
    chosen = choose_leaders(lists, olds, [{}] * len(names), [0] * len(names), True,
                            {s.id: s.weight for s in spus})
    del lists, olds
    splits = [(name, class_leaders(sizes.pop(name), leaders))
              for name, leaders in zip(names, chosen)]
    return context.parallelize(splits, slices)


def _sum_parts(parts: RDD, ids: frozenset[int]) -> dict[str, object]:
    """``layout_metrics`` from per-topic parts, summed on the executors."""
    parts = parts.persist(DISK)
    replicas = parts.flatMap(lambda p: p.replicas.items()).reduceByKey(add).collectAsMap()
    leaders = parts.flatMap(lambda p: p.leaders.items()).reduceByKey(add).collectAsMap()
    topic_r, topic_l, violations = parts.map(
        lambda p: (p.topic_replica_spread, p.topic_leader_spread, p.rack_violations)
    ).fold((0, 0, 0), lambda a, b: (max(a[0], b[0]), max(a[1], b[1]), a[2] + b[2]))
    led_worst = (parts.flatMap(lambda p: p.pairs.items()).reduceByKey(add)
                 .map(lambda kv: (kv[0][0], (kv[1], kv[1])))
                 .reduceByKey(lambda a, b: (a[0] + b[0], max(a[1], b[1])))
                 .values().collect())
    parts.unpersist()
    return layout_figures(replicas, leaders, topic_r, topic_l, violations,
                          failover_from(led_worst), ids)


__all__ = ["LayoutPart", "StreamedPlan", "generated_topics", "plan_streamed",
           "topics_from_cluster"]
