"""How a partition's replicas spread over racks (anti-affinity groups).

With at least as many racks as replicas, no two replicas of a partition share
a rack (002's anti-affinity). With fewer racks than replicas, the replicas
spread over every rack as evenly as they can, the way 000's rack-aware
assignment does it: RF 3 on 2 racks gives 2 + 1, RF 4 on 3 racks 2 + 1 + 1.
So the partition spans ``min(RF, racks)`` racks and each rack holds at most
``cap`` replicas of it: ``ceil(RF / racks)`` when every rack has that many
SPUs. A rack with fewer SPUs holds what it can, and the others take the rest
as evenly as they can: RF 4 on racks of 3 SPUs and 1 SPU gives 3 + 1. The
cap is then the least level ``L`` at which racks holding ``min(SPUs, L)``
each hold the replication factor (no rack can hold more than its SPUs).
"""
from __future__ import annotations

from collections import Counter
from typing import Hashable, Iterable, Mapping, NamedTuple, Sequence


class SpreadRule(NamedTuple):
    """Most replicas of one partition in one rack, and fewest racks it spans."""

    cap: int
    spans: int


def group_cap(replication: int, sizes: Iterable[int]) -> int:
    """Most replicas of one partition that one rack may hold, ``sizes``
    being the SPUs of each rack (see the module text)."""
    sizes = sorted(sizes)
    level = max(1, -(-replication // max(1, len(sizes))))
    # Racks smaller than the level hold all they can; the rest share what is left.
    while sum(min(n, level) for n in sizes) < replication and level < max(sizes, default=0):
        level += 1
    return level


def spread_rule(replication: int, sizes: Iterable[int]) -> SpreadRule:
    sizes = list(sizes)
    return SpreadRule(group_cap(replication, sizes), min(replication, len(sizes)))


class Spread(NamedTuple):
    """The worst partitions of a topic: fewest racks spanned, most in one rack."""

    fewest_groups: int
    most_in_one: int

    def fine(self, rule: SpreadRule) -> bool:
        return self.most_in_one <= rule.cap and self.fewest_groups >= rule.spans


def topic_spread(keyed: Iterable[Iterable[Hashable]]) -> Spread:
    """``keyed``: each partition's replicas as their groups."""
    fewest, most = 1 << 30, 0
    for keys in keyed:
        keys = list(keys)
        distinct = len(set(keys))
        fewest = min(fewest, distinct)
        # Counting is needed only where a group repeats (rare in large clusters).
        most = max(most, 1 if distinct == len(keys) else max(Counter(keys).values()))
    return Spread(fewest, most)


def map_spread(replica_map: Sequence[Sequence[int]], key: Mapping[int, Hashable]) -> Spread:
    """``topic_spread`` of a replica map whose SPUs ``key`` maps to groups;
    the usual partition, all groups distinct, is tested in C."""
    get = key.__getitem__
    distinct = [len(set(map(get, reps))) for reps in replica_map]
    if not distinct:
        return Spread(1 << 30, 0)
    sizes = list(map(len, replica_map))
    if distinct == sizes:
        return Spread(min(distinct), 1)
    crowded = (reps for reps, n, size in zip(replica_map, distinct, sizes) if n != size)
    return Spread(min(distinct), max(1, topic_spread(map(get, reps) for reps in crowded).most_in_one))


def misplaced(keys: list[Hashable], replication: int, rule: SpreadRule) -> bool:
    """The partition cannot reach a good spread by adding replicas alone."""
    counts = Counter(keys)
    if counts and max(counts.values()) > rule.cap:
        return True
    missing = rule.spans - len(counts)
    return missing > replication - len(keys)


def full_groups(keys: list[Hashable], replication: int, rule: SpreadRule) -> set[Hashable]:
    """Groups a newcomer may not come from: at their cap, or the slots left
    are all needed for racks the partition does not span yet."""
    counts = Counter(keys)
    missing = rule.spans - len(counts)
    slots = replication - len(keys)
    if missing >= slots:
        return set(counts)
    return {g for g, n in counts.items() if n >= rule.cap}


def secure_counts(replica_map: Iterable[Sequence[int]], key: Mapping[int, Hashable],
                  replication: int, rule: SpreadRule) -> dict[int, int]:
    """Replicas per SPU that need not move for the spread: all but those of a
    repeated rack in a partition that ``misplaced`` condemns."""
    counts: dict[int, int] = {}
    for reps in replica_map:
        keys = [key.get(s, s) for s in reps]
        risky = misplaced(keys, replication, rule)
        for spu, k in zip(reps, keys):
            if not (risky and keys.count(k) > 1):
                counts[spu] = counts.get(spu, 0) + 1
    return counts
