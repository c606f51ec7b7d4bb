"""How a partition's replicas spread over racks (anti-affinity groups).

With at least as many racks as replicas, no two replicas of a partition share
a rack (002's anti-affinity). With fewer racks than replicas, the replicas
spread over every rack as evenly as they can, the way 000's rack-aware
assignment does it: RF 3 on 2 racks gives 2 + 1, RF 4 on 3 racks 2 + 1 + 1.
So each rack holds at most ``ceil(RF / racks)`` replicas of one partition
and the partition spans ``min(RF, racks)`` racks.
"""
from __future__ import annotations

from collections import Counter
from typing import Hashable, Iterable, Mapping, NamedTuple, Sequence


def group_cap(replication: int, groups: int) -> int:
    """Most replicas of one partition that one rack may hold."""
    return max(1, -(-replication // max(1, groups)))


def spans_needed(replication: int, groups: int) -> int:
    return min(replication, groups)


class Spread(NamedTuple):
    """The worst partitions of a topic: fewest racks spanned, most in one rack."""

    fewest_groups: int
    most_in_one: int

    def fine(self, replication: int, groups: int) -> bool:
        return self.most_in_one <= group_cap(replication, groups) and \
            self.fewest_groups >= spans_needed(replication, groups)


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


def misplaced(keys: list[Hashable], replication: int, groups: int) -> bool:
    """The partition cannot reach a good spread by adding replicas alone."""
    counts = Counter(keys)
    if counts and max(counts.values()) > group_cap(replication, groups):
        return True
    missing = spans_needed(replication, groups) - len(counts)
    return missing > replication - len(keys)


def full_groups(keys: list[Hashable], replication: int, groups: int) -> set[Hashable]:
    """Groups a newcomer may not come from: at their cap, or the slots left
    are all needed for racks the partition does not span yet."""
    counts = Counter(keys)
    cap = group_cap(replication, groups)
    missing = spans_needed(replication, groups) - len(counts)
    slots = replication - len(keys)
    if missing >= slots:
        return set(counts)
    return {g for g, n in counts.items() if n >= cap}


def secure_counts(replica_map: Iterable[Sequence[int]], key: Mapping[int, Hashable],
                  replication: int, groups: int) -> dict[int, int]:
    """Replicas per SPU that need not move for the spread: all but those of a
    repeated rack in a partition that ``misplaced`` condemns."""
    counts: dict[int, int] = {}
    for reps in replica_map:
        keys = [key.get(s, s) for s in reps]
        risky = misplaced(keys, replication, groups)
        for spu, k in zip(reps, keys):
            if not (risky and keys.count(k) > 1):
                counts[spu] = counts.get(spu, 0) + 1
    return counts
