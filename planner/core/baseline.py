"""Baseline: what ``kafka-reassign-partitions --generate`` would propose.

The tool reassigns every topic from scratch with the broker-side assignment
algorithm documented for Kafka's AdminUtils.assignReplicasToBrokers: a
random start index and a random follower shift; the leader of partition p is
broker (start + p) mod n and followers follow at the shifted distance, the
shift growing by one after every n partitions. The rack-aware variant walks a
broker list that alternates racks and skips a broker whose rack (or which
itself) already holds a replica of the partition, until every rack (broker)
has one. Randomness comes from a seed, so a baseline is reproducible.
"""
from __future__ import annotations

import random
from typing import Iterator, Sequence

from planner.core.metrics import layout_metrics, moves_between, movement_metrics
from planner.core.model import Cluster, Options, Plan, ReplicaMap, Scenario, Spu
from planner.core.planner import current_facts, lower_bound, prepare


def assign_rack_unaware(brokers: Sequence[int], partitions: int, replication: int,
                        rng: random.Random) -> ReplicaMap:
    n = len(brokers)
    return tuple((brokers[first], *(brokers[_follower_index(first, shift, j, n)]
                                    for j in range(replication - 1)))
                 for first, shift in _walk(n, partitions, rng))


def _walk(n: int, partitions: int, rng: random.Random) -> Iterator[tuple[int, int]]:
    """(first broker index, follower shift) per partition: both start at random,
    the shift growing by one after every n partitions."""
    start, shift = rng.randrange(n), rng.randrange(n)
    for pid in range(partitions):
        if pid > 0 and pid % n == 0:
            shift += 1
        yield (pid + start) % n, shift


def _follower_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def rack_alternated(spus: Sequence[Spu]) -> list[Spu]:
    """Brokers ordered rack by rack in turn: first of each rack, then second..."""
    by_rack: dict[str, list[Spu]] = {}
    for spu in sorted(spus, key=lambda s: s.id):
        by_rack.setdefault(spu.rack or "", []).append(spu)
    queues = [by_rack[r] for r in sorted(by_rack)]
    result: list[Spu] = []
    for depth in range(max(len(q) for q in queues)):
        result.extend(q[depth] for q in queues if depth < len(q))
    return result


def assign_rack_aware(spus: Sequence[Spu], partitions: int, replication: int,
                      rng: random.Random) -> ReplicaMap:
    arranged = rack_alternated(spus)
    racks = len({s.rack for s in arranged})
    return tuple(_rack_aware_partition(arranged, first, shift * racks, replication, racks)
                 for first, shift in _walk(len(arranged), partitions, rng))


def _rack_aware_partition(arranged: Sequence[Spu], first: int, shift: int,
                          replication: int, racks: int) -> tuple[int, ...]:
    n = len(arranged)
    chosen = [arranged[first]]
    k = 0
    while len(chosen) < replication:
        candidate = arranged[_follower_index(first, shift, k, n)]
        k += 1
        used_racks = {s.rack for s in chosen}
        rack_ok = candidate.rack not in used_racks or len(used_racks) == racks
        if rack_ok and candidate not in chosen:
            chosen.append(candidate)
    return tuple(s.id for s in chosen)


def generate_plan(cluster: Cluster, scenario: Scenario | None = None,
                  options: Options | None = None, seed: int = 0) -> Plan:
    """The ``--generate`` proposal as a Plan, with the same metrics as ours."""
    prep = prepare(cluster, scenario or Scenario(), options or Options())
    spus = list(prep.effective.spus)
    rack_aware = prep.options.anti_affinity and all(s.rack is not None for s in spus)
    target = {}
    for topic in sorted(cluster.topics, key=lambda t: t.name):
        rng = random.Random(f"{seed}:{topic.name}")
        rf = prep.effective.replication[topic.name]
        if rack_aware:
            target[topic.name] = assign_rack_aware(spus, topic.partitions, rf, rng)
        else:
            target[topic.name] = assign_rack_unaware([s.id for s in spus], topic.partitions, rf, rng)
    current = {t.name: t.replicas for t in cluster.topics}
    moves = moves_between(current, target)
    metrics = {**movement_metrics(moves, cluster.topics, lower_bound(prep)),
               **layout_metrics(target, spus)}
    return Plan(prep.scenario, prep.options, target, moves, metrics,
                dict(current_facts(cluster).before))
