"""Draining one SPU: only its replicas move (Cruise Control's remove_broker).

A rebalance of "the cluster without SPU N" may move any replica to reach
balance; a drain moves exactly the replicas on N and nothing else. Each one
goes to the SPU that keeps the topic most even: outside the partition's racks
when racks are kept apart, then the fewest replicas of the topic, then the
fewest replicas overall, then the lowest id. Leadership changes only where N
leads (or is the preferred leader): the replica that leads fewest partitions
takes over, so the new replica, which still has to catch up, never leads.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from itertools import chain

from planner.core.metrics import layout_metrics, movement_metrics
from planner.core.model import (Cluster, Move, Options, Plan, PlanError, ReplicaMap, Replicas,
                                Scenario, Spu)


def drain_plan(cluster: Cluster, spu_id: int, options: Options | None = None,
               unavailable: Collection[int] = ()) -> Plan:
    """The moves that empty ``spu_id``; ``unavailable`` SPUs (offline) take no replica."""
    options = options or Options()
    if spu_id not in {s.id for s in cluster.spus}:
        raise PlanError(f"SPU {spu_id} is not in the cluster")
    drained = _Drain(cluster, spu_id, options, frozenset(unavailable))
    target = {t.name: drained.topic(t.name, t.replicas, t.current_leaders)
              for t in cluster.topics}
    moves = tuple(drained.moves)
    after = tuple(s for s in cluster.spus if s.id != spu_id)
    current = {t.name: t.replicas for t in cluster.topics}
    leaders = {t.name: t.current_leaders for t in cluster.topics}
    metrics = {**movement_metrics(moves, cluster.topics, drained.held),
               **layout_metrics(target, after)}
    scenario = Scenario(name=f"drain SPU {spu_id}", remove_spus=(spu_id,))
    return Plan(scenario, options, target, moves, metrics,
                layout_metrics(current, cluster.spus, leaders))


class _Drain:
    """Counters kept while the drained SPU's replicas are placed one by one."""

    def __init__(self, cluster: Cluster, spu_id: int, options: Options,
                 unavailable: frozenset[int]) -> None:
        self.spu_id, self.options = spu_id, options
        self.rack = {s.id: s.rack for s in cluster.spus}
        self.takers: list[Spu] = [s for s in cluster.spus
                                  if s.id != spu_id and s.id not in unavailable]
        self.total = Counter(chain.from_iterable(chain.from_iterable(
            t.replicas for t in cluster.topics)))
        self.leading = Counter(chain.from_iterable(t.current_leaders for t in cluster.topics))
        self.held = self.total.get(spu_id, 0)
        self.moves: list[Move] = []

    def topic(self, name: str, replica_map: ReplicaMap,
              leaders: Sequence[int]) -> ReplicaMap:
        per_topic = Counter(chain.from_iterable(replica_map))
        return tuple(self._partition(name, pid, reps, leaders[pid], per_topic)
                     if self.spu_id in reps else reps
                     for pid, reps in enumerate(replica_map))

    def _partition(self, name: str, pid: int, before: Replicas, leader: int,
                   per_topic: Counter) -> Replicas:
        kept = [s for s in before if s != self.spu_id]
        taker = self._taker(name, pid, before, kept, per_topic)
        if before[0] == self.spu_id or leader == self.spu_id:
            after = self._new_leader_first(kept, leader) + (taker,)
        else:
            after = tuple(taker if s == self.spu_id else s for s in before)
        for counter in (per_topic, self.total):
            counter[taker] += 1
            counter[self.spu_id] -= 1
        if leader != after[0]:
            self.leading[leader] -= 1
            self.leading[after[0]] += 1
        self.moves.append(Move(name, pid, before, after, (taker,), (self.spu_id,),
                               leader != after[0]))
        return after

    def _new_leader_first(self, kept: list[int], leader: int) -> tuple[int, ...]:
        """The actual leader keeps leading when it stays; else the kept replica leading least."""
        if not kept:
            return ()
        first = leader if leader in kept else min(kept, key=lambda s: (self.leading[s],
                                                                       kept.index(s)))
        return (first, *(s for s in kept if s != first))

    def _taker(self, name: str, pid: int, before: Replicas, kept: list[int],
               per_topic: Counter) -> int:
        racks = {self.rack.get(s) for s in kept} - {None}
        candidates = [s for s in self.takers if s.id not in before]
        if not candidates:
            raise PlanError(f"cannot drain SPU {self.spu_id}: {name}/{pid} "
                            f"({', '.join(map(str, before))}) has no other SPU to move to")

        def cost(spu: Spu) -> tuple[int, int, int, int]:
            clash = int(self.options.anti_affinity and spu.rack is not None
                        and spu.rack in racks)
            return (clash, per_topic[spu.id], self.total[spu.id], spu.id)
        return min(candidates, key=cost).id


def replicas_on(layout: Mapping[str, ReplicaMap], spu_id: int) -> int:
    """How many replicas ``spu_id`` holds: what a drain of it moves."""
    return sum(reps.count(spu_id) for replica_map in layout.values() for reps in replica_map)
