"""Every figure a plan reports, defined once.

Movement (the plan against the current layout):

* ``replicas_moved``: replica copies to SPUs that did not hold the partition.
* ``partitions_changed``: partitions whose ordered replica list changes (the
  entries of a reassignment), including pure leader or order changes.
* ``bytes_moved``: sum of the partition size over every replica moved; None
  when no partition size is known (partitions of unknown size count 0).
* ``leader_changes``: partitions whose first replica changes.
* ``lower_bound``: replicas that any balanced plan must copy. Per topic the
  departures are the replicas on removed SPUs plus, per anti-affinity group
  (a rack; each SPU alone when anti-affinity is off), the larger of the
  replicas above the SPUs' rounded-up targets and the replicas that must
  leave the rack so that no partition holds more than its cap there (one;
  with fewer racks than replicas see ``spread``). Departures
  beyond what a lower replication factor drops must be copied elsewhere,
  and a higher replication factor adds copies; SPUs below their rounded-down
  target must receive at least the difference. The bound is the larger of
  these two counts.
* ``moved_to_lower_bound``: replicas_moved / lower_bound (1.0 when both are
  0, None when only the bound is 0).
* ``search_stopped_early``: topics whose placement search stopped at its
  operation budget and whose placement the exact flow could not replace (too
  large to afford): their plan may copy more than needed, or leave an SPU off
  its target; 0 when every topic's search ran to its end.

Layout (the plan's result, and ``before`` for the current layout), over the
SPUs that may hold replicas:

* ``replica_spread`` / ``leader_spread``: max - min replicas / leaders per SPU.
* ``topic_replica_spread`` / ``topic_leader_spread``: the same within each
  topic; the worst topic.
* ``rack_violations``: partitions with two replicas on SPUs of one rack (SPUs
  without a rack never count); with fewer racks than replicas, partitions
  that do not span every rack or hold more than the rack cap in one
  (``ceil(RF / racks)`` unless a rack has fewer SPUs: see ``spread``).
* ``failover_concentration``: for each SPU, the largest share of the
  partitions it leads whose next replica in line is one same SPU; the worst
  SPU. 0.0 when no partition has a follower.
"""
from __future__ import annotations

from collections import Counter
from itertools import chain, compress, filterfalse
from operator import and_, eq, itemgetter, not_
from typing import Collection, Mapping, Sequence

from planner.core.model import Move, ReplicaMap, Spu, Topic
from planner.core.spread import SpreadRule, spread_rule, topic_spread
from planner.core.targets import TopicShares, ceil_share, floor_share

LAYOUT_KEYS = ("replica_spread", "leader_spread", "topic_replica_spread",
               "topic_leader_spread", "rack_violations", "failover_concentration")
MOVEMENT_KEYS = ("replicas_moved", "partitions_changed", "bytes_moved", "leader_changes",
                 "lower_bound", "moved_to_lower_bound", "search_stopped_early")


def layout_metrics(layout: Mapping[str, ReplicaMap], spus: Sequence[Spu],
                   leaders: Mapping[str, Sequence[int]] | None = None,
                   counts: Mapping[str, Mapping[int, int]] | None = None,
                   crowded: Collection[str] | None = None) -> dict[str, object]:
    """Layout figures; ``leaders`` gives who leads each partition where that
    is not its first replica (the actual leaders of a running cluster);
    ``counts``: each topic's replicas per SPU, and ``crowded``: the topics
    with a partition holding two replicas in one rack, when the caller knows."""
    ids = frozenset(s.id for s in spus)
    rack_of = {s.id: s.rack for s in spus}
    topic_r, topic_l = 0, 0
    leading: list[int] = []
    for name, replica_map in layout.items():
        led = leaders.get(name) if leaders is not None else None
        led = led if led is not None else [reps[0] for reps in replica_map]
        per_r = counts[name] if counts is not None else Counter(chain.from_iterable(replica_map))
        per_l = Counter(led)
        topic_r, topic_l = max(topic_r, _spread(per_r, ids)), max(topic_l, _spread(per_l, ids))
        leading.extend(led)
    # Counted again over the whole layout: Counter.update with a mapping runs in Python.
    total_r = Counter(chain.from_iterable(chain.from_iterable(layout.values())))
    total_l = Counter(leading)
    return {"replica_spread": _spread(total_r, ids), "leader_spread": _spread(total_l, ids),
            "topic_replica_spread": topic_r, "topic_leader_spread": topic_l,
            "rack_violations": rack_violations(layout, rack_of, crowded),
            "failover_concentration": failover_concentration(layout)}


def _spread(counts: Mapping[int, int], ids: Sequence[int] | frozenset[int]) -> int:
    """max - min over ``ids`` (an id never counted holds 0) and any other SPU counted."""
    id_set = ids if isinstance(ids, frozenset) else frozenset(ids)
    if not counts:
        return 0
    inside = len(id_set.intersection(counts))
    low = 0 if inside < len(id_set) else min(counts.values())
    return max(counts.values()) - low


def rack_violations(layout: Mapping[str, ReplicaMap], rack_of: Mapping[int, str | None],
                    crowded: Collection[str] | None = None) -> int:
    """Partitions whose racked replicas spread worse than the racks allow;
    only the ``crowded`` topics are scanned when given (no other can break it)."""
    key = _GroupKeys(rack_of)
    rules: dict[int, SpreadRule] = {}
    count = 0
    for name, replica_map in layout.items():
        if crowded is not None and name not in crowded:
            continue
        # Most partitions span distinct racks: that test runs in C.
        for reps in replica_map:
            if len(set(map(key.__getitem__, reps))) != len(reps):
                keys = [key[s] for s in reps]
                if len(reps) not in rules:
                    # A rackless SPU is a group alone, as in the planner's targets.
                    sizes = Counter(key[s] for s in rack_of).values()
                    rules[len(reps)] = spread_rule(len(reps), sizes)
                count += not topic_spread([keys]).fine(rules[len(reps)])
    return count


class _GroupKeys(dict):
    """SPU -> its rack, or a group of its own when it has none (or is unknown)."""

    def __init__(self, rack_of: Mapping[int, str | None]) -> None:
        super().__init__((spu, rack or f"~{spu}") for spu, rack in rack_of.items())

    def __missing__(self, spu: int) -> str:
        return f"~{spu}"


_first = itemgetter(0)
_first_two = itemgetter(0, 1)


def failover_concentration(layout: Mapping[str, ReplicaMap]) -> float:
    pairs: Counter[tuple[int, ...]] = Counter()
    for replica_map in layout.values():
        if min(map(len, replica_map), default=0) > 1:
            pairs.update(map(_first_two, replica_map))  # counted in C
        else:
            pairs.update(reps[:2] for reps in replica_map if len(reps) > 1)
    led: dict[int, int] = {}
    for (leader, _), count in pairs.items():
        led[leader] = led.get(leader, 0) + count
    worst: dict[int, int] = {}
    for (leader, _), count in pairs.items():
        worst[leader] = max(worst.get(leader, 0), count)
    return max((worst[s] / led[s] for s in led), default=0.0)


def moves_between(before: Mapping[str, ReplicaMap], after: Mapping[str, ReplicaMap],
                  leaders: Mapping[str, Sequence[int]] | None = None) -> tuple[Move, ...]:
    """Changed partitions; a leader change is against ``leaders`` (the actual
    leaders) where given, else against the first replica."""
    moves = []
    for name in sorted(after):
        led = leaders.get(name) if leaders is not None else None
        olds, news = before[name], after[name]
        leads = led if led is not None else map(_first, olds)
        # Partitions with the same list and the same leader are skipped in C.
        same = map(and_, map(eq, olds, news), map(eq, leads, map(_first, news)))
        for pid in compress(range(min(len(olds), len(news))), map(not_, same)):
            old, new = olds[pid], news[pid]
            lead = old[0] if led is None else led[pid]
            if old != new or lead != new[0]:
                added = tuple(filterfalse(old.__contains__, new))
                removed = tuple(filterfalse(new.__contains__, old))
                moves.append(Move(name, pid, old, new, added, removed, lead != new[0]))
    return tuple(moves)


def movement_metrics(moves: Sequence[Move], topics: Sequence[Topic],
                     lower_bound: int, stopped_early: int = 0) -> dict[str, object]:
    moved = sum(len(m.added) for m in moves)
    return {"replicas_moved": moved, "partitions_changed": len(moves),
            "bytes_moved": bytes_moved(moves, topics),
            "leader_changes": sum(m.leader_change for m in moves),
            "lower_bound": lower_bound,
            "moved_to_lower_bound": ratio(moved, lower_bound),
            "search_stopped_early": stopped_early}


def ratio(moved: int, bound: int) -> float | None:
    if bound == 0:
        return 1.0 if moved == 0 else None
    return moved / bound


def bytes_moved(moves: Sequence[Move], topics: Sequence[Topic]) -> int | None:
    sizes = {t.name: t.sizes for t in topics if t.sizes is not None}
    if not sizes:
        return None
    return sum(len(m.added) * sizes[m.topic][m.partition]
               for m in moves if m.topic in sizes)


def topic_lower_bound(topic: Topic, shares: TopicShares, replication: int,
                      held: Mapping[int, int] | None = None, crowded: bool = True) -> int:
    """The movement lower bound of one topic (see the module text). ``held``:
    the topic's replicas per SPU when already counted; ``crowded``: whether
    any partition may break the rack rule (False skips that scan)."""
    held = held if held is not None else Counter(chain.from_iterable(topic.replicas))
    if held.keys() <= shares.shares.keys():
        counts, removed = held, 0  # the usual case: no replica on a removed SPU
    else:
        counts = {spu: n for spu, n in held.items() if spu in shares.shares}
        removed = sum(n for spu, n in held.items() if spu not in shares.shares)
    departures = removed + _group_departures(topic, shares, counts, crowded)
    drop = topic.partitions * max(0, topic.replication - replication)
    grow = topic.partitions * max(0, replication - topic.replication)
    refill = max(0, departures - drop) + grow
    _, floors = _ROUNDED.of(shares.shares)
    floor_gap = sum(max(0, floor - counts.get(s, 0)) for s, floor in floors)
    return max(refill, floor_gap)


class _Rounded:
    """Each share rounded up, and the positive rounded-down shares, computed
    once per shares mapping: topics of one shape share theirs, and a million
    partitions means thousands of topics over thousands of SPUs."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self.seen: dict[int, tuple[Mapping, dict[int, int], list[tuple[int, int]]]] = {}

    def of(self, shares: Mapping[int, float]) -> tuple[dict[int, int], list[tuple[int, int]]]:
        entry = self.seen.get(id(shares))
        if entry is None or entry[0] is not shares:
            if len(self.seen) >= self.size:
                self.seen.clear()
            floors = [(s, f) for s, f in ((s, floor_share(q)) for s, q in shares.items()) if f > 0]
            entry = self.seen[id(shares)] = (shares, {s: ceil_share(q) for s, q in shares.items()},
                                             floors)
        return entry[1], entry[2]


_ROUNDED = _Rounded()


def _group_departures(topic: Topic, shares: TopicShares, counts: Mapping[int, int],
                      crowded: bool = True) -> int:
    group_of = shares.group_of
    ceils, _ = _ROUNDED.of(shares.shares)
    surplus: dict[str, int] = {}
    for spu, count in counts.items():
        # Only SPUs above their rounded-up share add to a group's surplus.
        if count > ceils[spu]:
            group = group_of[spu] if group_of is not None else str(spu)
            surplus[group] = surplus.get(group, 0) + count - ceils[spu]
    crowding: dict[str, int] = {}
    if shares.group_of is not None and crowded:
        for reps in topic.replicas:
            seen: dict[str, int] = {}
            for spu in reps:
                if spu in group_of:
                    seen[group_of[spu]] = seen.get(group_of[spu], 0) + 1
            for group, n in seen.items():
                crowding[group] = crowding.get(group, 0) + max(0, n - shares.group_cap)
    groups = set(surplus) | set(crowding)
    return sum(max(surplus.get(g, 0), crowding.get(g, 0)) for g in groups)
