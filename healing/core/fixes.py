"""The fix each anomaly gets: a list of moves, made with the planner's own rules.

* SPU down: the SPUs are drained as if decommissioned (planner/core/drain.py:
  only their replicas move, racks kept apart where an SPU outside the
  partition's racks is up, fewest replicas first), one SPU after another.
* Under-replicated by topology: each replica on an SPU no longer registered
  (or missing from a short list) gets a new SPU, chosen as the drain chooses.
* Rack spread: one replica in a rack holding two of the partition moves to a
  rack it lacks, one move per missing rack and never the leader when another
  replica will do (minimal movement, Redpanda's rack-awareness repair).
* Goal violation: the planner's minimal-movement rebalance (planner/core/planner.py).
* Slow SPU (when ``slow_spu_move_leaders`` is on): its preferred leaderships move to
  an LRS member, replicas reordered only.

Every fix keeps at most ``budget`` moves (the hourly bound); what is left is
planned again once those landed.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from typing import Any

from planner import core as planner
from planner.core.drain import drain_plan
from planner.core.model import Move

from healing.core.detect import badly_spread, rack_of, racks_up, short_partitions
from healing.core.model import AnomalyType, Snapshot


@dataclass(frozen=True)
class Fix:
    name: str
    moves: tuple[Move, ...]
    current: dict[str, Any]  # the planner's serial cluster form: what the plan starts from
    cut: int = 0  # moves left out by the hourly bound
    # Moved partitions left on fewer racks than replicas: the rack rule broken, said so.
    racks_broken: int = 0


def layout(snapshot: Snapshot) -> dict[str, list[tuple[int, ...]]]:
    topics: dict[str, list[tuple[int, ...]]] = {}
    for p in sorted(snapshot.partitions, key=lambda p: (p.topic, p.partition)):
        topics.setdefault(p.topic, []).append(p.replicas)
    return topics


def current_of(snapshot: Snapshot) -> dict[str, Any]:
    """The snapshot in the planner's serial form (short replica lists kept as they are)."""
    return {"spus": [{"id": s.id, "rack": s.rack, "weight": 1.0}
                     for s in snapshot.spus if s.registered],
            "topics": [{"name": name, "partitions": [{"id": i, "replicas": list(r)}
                                                      for i, r in enumerate(reps)],
                        "sizes": None, "leaders": None}
                       for name, reps in layout(snapshot).items()]}


def planner_cluster(snapshot: Snapshot) -> planner.Cluster:
    """The planner's cluster; SPUs named by a replica map but no longer registered are in it
    (rackless, unavailable), so the drain may run beside a topology repair still to come."""
    named = {r for p in snapshot.partitions for r in p.replicas}
    spus = [planner.Spu(s.id, s.rack) for s in snapshot.spus]
    spus += [planner.Spu(g) for g in sorted(named - {s.id for s in snapshot.spus})]
    uniform = {name: reps for name, reps in layout(snapshot).items()
               if len({len(r) for r in reps}) == 1 and reps[0]}
    return planner.Cluster(tuple(spus), tuple(planner.Topic(name, tuple(reps))
                                              for name, reps in uniform.items()))


def plan_fix(kind: AnomalyType, snapshot: Snapshot, spus: Collection[int] = (),
             budget: int | None = None) -> Fix:
    moves, name = _moves(kind, snapshot, spus)
    kept = moves if budget is None else moves[:budget]
    rack = rack_of(snapshot)
    broken = sum(len({rack.get(s) for s in m.after}) < len(m.after) for m in kept) \
        if all(r is not None for r in rack.values()) else 0
    return Fix(name, tuple(kept), current_of(snapshot), len(moves) - len(kept), broken)


def _moves(kind: AnomalyType, snapshot: Snapshot,
           spus: Collection[int]) -> tuple[list[Move], str]:
    if kind is AnomalyType.SPU_DOWN:
        ids = sorted(spus)
        return drain_many(snapshot, ids), f"self-healing: re-create the replicas of SPU " \
                                          f"{', '.join(map(str, ids))}"
    if kind is AnomalyType.UNDER_REPLICATED:
        return repair_topology(snapshot), "self-healing: repair under-replicated partitions"
    if kind is AnomalyType.RACK_SPREAD:
        return restore_spread(snapshot), "self-healing: restore rack spread"
    if kind is AnomalyType.GOAL_VIOLATION:
        return rebalance(snapshot), "self-healing: rebalance"
    if kind is AnomalyType.SLOW_SPU:
        ids = sorted(spus)
        return demote(snapshot, ids), f"self-healing: leadership off slow SPU " \
                                      f"{', '.join(map(str, ids))}"
    raise ValueError(f"{kind.value} has no fix")


def drain_many(snapshot: Snapshot, spu_ids: Iterable[int]) -> list[Move]:
    """The drains of several SPUs, one after the other, merged into one move per partition."""
    cluster = planner_cluster(snapshot)
    unavailable = {s.id for s in snapshot.spus if not s.online} | \
        {s.id for s in cluster.spus if snapshot.spu(s.id) is None}
    merged: dict[tuple[str, int], Move] = {}
    for spu in spu_ids:
        plan = drain_plan(cluster, spu, unavailable=unavailable)
        for m in plan.moves:
            first = merged.get((m.topic, m.partition))
            merged[(m.topic, m.partition)] = _move(m.topic, m.partition,
                                                   first.before if first else m.before, m.after)
        cluster = planner.Cluster(cluster.spus, tuple(
            planner.Topic(t.name, plan.target[t.name]) for t in cluster.topics))
    return _survivors_lead([merged[k] for k in sorted(merged)], unavailable, snapshot)


def _survivors_lead(moves: list[Move], down: Collection[int], snapshot: Snapshot) -> list[Move]:
    """Each drain after the first plans around the previous one's layout, so it may have
    put first a dead SPU still to be drained, or the copy an earlier drain just made; the
    executor would then elect that copy once it caught up (an extra election). The leader
    stays where it is up; else the surviving original replica leading fewest goes first."""
    leading = Counter(p.replicas[0] for p in snapshot.partitions if p.replicas)
    for m in moves:
        leading[m.after[0]] += 1
        leading[m.before[0]] -= 1
    fixed = []
    for m in moves:
        survivors = [s for s in m.before if s not in down and s in m.after]
        leader_stays = m.before[0] in survivors
        right = m.after[0] == m.before[0] if leader_stays else m.after[0] in survivors
        if not survivors or right:
            fixed.append(m)
            continue
        leading[m.after[0]] -= 1
        first = m.before[0] if leader_stays else \
            min(survivors, key=lambda s: (leading[s], m.before.index(s)))
        leading[first] += 1
        fixed.append(_move(m.topic, m.partition, m.before,
                           (first, *(s for s in m.after if s != first))))
    return fixed


def _move(topic: str, pid: int, before: tuple[int, ...], after: tuple[int, ...]) -> Move:
    return Move(topic, pid, tuple(before), tuple(after),
                tuple(s for s in after if s not in before),
                tuple(s for s in before if s not in after),
                bool(before) and bool(after) and before[0] != after[0])


class _Takers:
    """Choose new SPUs as the drain does: a rack the partition lacks, then fewest replicas."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.rack = rack_of(snapshot)
        self.up = [s.id for s in snapshot.spus if s.online and s.registered]
        self.held = Counter(r for p in snapshot.partitions for r in p.replicas)

    def pick(self, replicas: list[int], apart: bool, within: str | None = None) -> int | None:
        racks = {self.rack.get(r) for r in replicas}
        free = [s for s in self.up if s not in replicas
                and (within is None or self.rack.get(s) == within)]
        if not free:
            return None
        best = min(free, key=lambda s: (apart and self.rack.get(s) in racks, self.held[s], s))
        self.held[best] += 1
        return best


def repair_topology(snapshot: Snapshot) -> list[Move]:
    """Replicas on unregistered SPUs replaced in place, short lists filled up to the factor."""
    registered = {s.id for s in snapshot.spus if s.registered}
    takers, moves = _Takers(snapshot), []
    for p in short_partitions(snapshot):
        after = [r for r in p.replicas if r in registered]
        while len(after) < p.factor:
            taker = takers.pick(after, p.racks_apart)
            if taker is None:
                break  # not enough SPUs up: repaired as far as it goes, the rest later
            after.append(taker)
        ghosts = iter(a for a in after if a not in p.replicas)
        ordered = [r if r in registered else next(ghosts, None) for r in p.replicas]
        ordered = [r for r in ordered if r is not None] + list(ghosts)
        if tuple(ordered) != p.replicas:
            moves.append(_move(p.topic, p.partition, p.replicas, tuple(ordered)))
    return moves


def restore_spread(snapshot: Snapshot) -> list[Move]:
    takers, moves = _Takers(snapshot), []
    up = racks_up(snapshot)
    for p in badly_spread(snapshot):
        after = list(p.replicas)
        while True:
            counts = Counter(takers.rack[r] for r in after)
            lacking = sorted(up - set(counts))
            crowded = [i for i, r in enumerate(after) if counts[takers.rack[r]] > 1]
            if not lacking or not crowded:
                break
            # A follower moves rather than the leader: no election for a spread repair.
            victim = max(crowded, key=lambda i: (i > 0, i))
            taker = takers.pick([r for i, r in enumerate(after) if i != victim], True,
                                within=lacking[0])
            if taker is None:
                break
            takers.held[after[victim]] -= 1
            after[victim] = taker
        if tuple(after) != p.replicas:
            moves.append(_move(p.topic, p.partition, p.replicas, tuple(after)))
    return moves


def demote(snapshot: Snapshot, spus: Collection[int]) -> list[Move]:
    """The slow SPUs' preferred leaderships handed to an LRS member that is not slow: the same
    replicas, reordered (the executor elects the new first replica, nothing is copied)."""
    slow, moves = set(spus), []
    for p in snapshot.partitions:
        if not p.replicas or p.replicas[0] not in slow:
            continue
        heir = next((r for r in p.replicas if r in p.lrs and r not in slow), None)
        if heir is not None:
            after = (heir, *(r for r in p.replicas if r != heir))
            moves.append(_move(p.topic, p.partition, p.replicas, after))
    return moves


def rebalance(snapshot: Snapshot) -> list[Move]:
    """The planner's minimal-movement balanced layout over the SPUs that are up."""
    cluster = planner_cluster(snapshot)
    down = tuple(s.id for s in cluster.spus
                 if snapshot.spu(s.id) is None or not snapshot.spu(s.id).online)
    result = planner.plan(cluster, planner.Scenario("self-healing rebalance", remove_spus=down))
    return list(result.moves)


def target_of(current: dict[str, Any], moves: Iterable[Move]) -> dict[str, list[dict[str, Any]]]:
    """The layout once ``moves`` landed, in the planner's serial form."""
    after = {(m.topic, m.partition): m.after for m in moves}
    return {t["name"]: [{"id": p["id"], "replicas": list(after.get((t["name"], p["id"]),
                                                                   p["replicas"]))}
                        for p in t["partitions"]]
            for t in current["topics"]}
