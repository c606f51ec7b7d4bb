"""Replica list order: leader first, then the next in line, then the rest.

When a leader fails, the next replica in its list takes over. If one SPU is
second in line for most partitions an SPU leads, that SPU inherits all of
them at once; so, with order optimisation on, each partition's second
replica is the follower that the leader has used least so far as its
successor (cluster-wide, across topics). Followers otherwise keep their
existing relative order, which keeps plans stable.
"""
from __future__ import annotations

from typing import Iterable, Mapping, Sequence

from planner.core.model import ReplicaMap, Replicas


class SuccessorCounts:
    """How often each SPU is next in line behind each leader."""

    def __init__(self) -> None:
        self.pairs: dict[tuple[int, int], int] = {}
        self.seconds: dict[int, int] = {}

    def pick(self, leader: int, followers: Sequence[int], previous: int | None) -> int:
        pairs, seconds = self.pairs, self.seconds
        best, best_key = -1, None
        for u in followers:
            key = (pairs.get((leader, u), 0), u != previous, seconds.get(u, 0), u)
            if best_key is None or key < best_key:
                best, best_key = u, key
        return best

    def record(self, leader: int, second: int) -> None:
        self.pairs[(leader, second)] = self.pairs.get((leader, second), 0) + 1
        self.seconds[second] = self.seconds.get(second, 0) + 1


def order_topic(replicas: Sequence[Replicas], leaders: Sequence[int],
                previous: Sequence[Replicas], optimise: bool,
                counts: SuccessorCounts) -> ReplicaMap:
    ordered = []
    pairs, seconds = counts.pairs, counts.seconds
    pair_count, second_count = pairs.get, seconds.get
    for reps, leader, before in zip(replicas, leaders, previous):
        # Usually the leader is already first: a slice, not a scan.
        followers = list(reps[1:]) if reps and reps[0] == leader else [r for r in reps if r != leader]
        if optimise and len(followers) > 1:
            # SuccessorCounts.pick and _old_second, inlined: this loop runs once
            # per partition of the cluster.
            old_second = _old_second(before, leader)
            if len(followers) == 2:
                # Replication 3, the common case: the same comparison, key by key.
                u, v = followers
                a, b = pair_count((leader, u), 0), pair_count((leader, v), 0)
                if a == b:
                    a, b = u != old_second, v != old_second
                    if a == b:
                        a, b = second_count(u, 0), second_count(v, 0)
                        if a == b:
                            a, b = u, v
                if b < a:
                    followers = [v, u]
            else:
                second, best = -1, None
                for u in followers:
                    key = (pair_count((leader, u), 0), u != old_second, second_count(u, 0), u)
                    if best is None or key < best:
                        second, best = u, key
                if second != followers[0]:
                    followers.remove(second)
                    followers.insert(0, second)
        if followers:
            # SuccessorCounts.record, inlined.
            pair = (leader, followers[0])
            pairs[pair] = pair_count(pair, 0) + 1
            seconds[pair[1]] = second_count(pair[1], 0) + 1
        ordered.append((leader, *followers))
    return tuple(ordered)


def _old_second(before: Replicas, leader: int) -> int | None:
    """The first replica after the leader in the old order (ids are distinct)."""
    if before and before[0] != leader:
        return before[0]
    return before[1] if len(before) > 1 else None


def order_all(topics: Iterable[str], replicas: Mapping[str, Sequence[Replicas]],
              leaders: Mapping[str, Sequence[int]], previous: Mapping[str, ReplicaMap],
              optimise: bool) -> dict[str, ReplicaMap]:
    """Order every topic in the given order, sharing successor counts."""
    counts = SuccessorCounts()
    return {name: order_topic(replicas[name], leaders[name], previous[name], optimise, counts)
            for name in topics}
