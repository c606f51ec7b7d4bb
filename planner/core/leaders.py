"""Choosing each partition's leader among its (already placed) replicas.

Leadership moves by reordering a replica list, never by moving data, so it
runs after placement, over the whole cluster at once (it needs only SPU ids,
so it is cheap even for very large clusters). An SPU's fair share of leaders
is its replica quota divided by the replication factor, summed over topics;
its leader quota is that share rounded down or up, rounding up first where
the SPU already leads enough partitions (fewer leader changes). Within a
topic an SPU leads at most its topic share rounded up, so topics stay
balanced too. Existing leaders are kept where quotas allow; the remaining
partitions are matched to SPUs, through shortest augmenting paths (hand a
partition over from a full SPU to another of its replicas) when no replica
has room.
"""
from __future__ import annotations

import math
from collections import deque
from itertools import islice
from typing import Mapping, Sequence

from planner.core.model import Replicas
from planner.core.targets import EPS, ceil_share


def leader_quotas(shares: Mapping[int, float], keepable: Mapping[int, int]) -> dict[int, int]:
    """Round cluster-wide leader shares to integers with the exact total."""
    quota = {s: math.floor(q + EPS) for s, q in shares.items()}
    left = round(sum(shares.values())) - sum(quota.values())
    order = sorted(shares, key=lambda s: (keepable.get(s, 0) <= quota[s],
                                          -(shares[s] - quota[s]), s))
    for spu in order[:max(0, left)]:
        quota[spu] += 1
    return quota


class LeaderMatching:
    """Partitions (global index) matched to leader SPUs under two bounds."""

    def __init__(self, replicas: Sequence[Replicas], topic_of: Sequence[int],
                 quota: Mapping[int, int], topic_cap: Mapping[tuple[int, int], int]) -> None:
        self.reps, self.topic_of = replicas, topic_of
        self.quota, self.cap = quota, topic_cap
        self.leader: list[int | None] = [None] * len(replicas)
        self.load: dict[int, int] = {}
        self.topic_load: dict[tuple[int, int], int] = {}
        # Insertion-ordered, so searches are deterministic without sorting.
        self.owned: dict[int, dict[int, None]] = {}
        self.hosted: dict[int, list[int]] = {}
        for pid, reps in enumerate(replicas):
            for spu in reps:
                self.hosted.setdefault(spu, []).append(pid)

    def room(self, pid: int, spu: int) -> bool:
        key = (self.topic_of[pid], spu)
        return self.topic_load.get(key, 0) < self.cap.get(key, 0) or self.leader[pid] == spu

    def spare(self, spu: int) -> int:
        return self.quota.get(spu, 0) - self.load.get(spu, 0)

    def take(self, pid: int, spu: int) -> None:
        previous = self.leader[pid]
        if previous is not None:
            self._count(pid, previous, -1)
            del self.owned[previous][pid]
        self.leader[pid] = spu
        self._count(pid, spu, 1)
        self.owned.setdefault(spu, {})[pid] = None

    def _count(self, pid: int, spu: int, step: int) -> None:
        key = (self.topic_of[pid], spu)
        self.load[spu] = self.load.get(spu, 0) + step
        self.topic_load[key] = self.topic_load.get(key, 0) + step

    def keep(self, old_leaders: Sequence[int | None], needy: set[int]) -> None:
        # Keep first the partitions no SPU short of leaders could take over.
        order = sorted(range(len(old_leaders)),
                       key=lambda p: (any(s in needy for s in self.reps[p]), p))
        for pid in order:
            old = old_leaders[pid]
            if old in self.reps[pid] and self.spare(old) > 0 and self.room(pid, old):
                self.take(pid, old)

    def place_rest(self) -> None:
        waiting = [p for p in range(len(self.reps)) if self.leader[p] is None]
        stuck = [p for p in waiting if not self._direct(p)]
        for pid in stuck:
            if not self._augment(pid, limit=8):
                self.take(pid, max(self.reps[pid],
                                   key=lambda s: (self.room(pid, s), self.spare(s), -s)))

    def pull_up(self, floor: Mapping[int, int]) -> None:
        """Hand partitions to SPUs below ``floor`` from replicas above theirs."""
        for spu in sorted(floor):
            while self.load.get(spu, 0) < floor[spu] and self._pull(spu, floor):
                pass

    def push_down(self, ceiling: Mapping[int, int]) -> None:
        """Hand partitions from SPUs above ``ceiling`` to replicas with room."""
        for spu in sorted(ceiling):
            while self.load.get(spu, 0) > ceiling[spu] and self._push(spu, ceiling):
                pass

    def _push(self, spu: int, ceiling: Mapping[int, int], limit: int = 200) -> bool:
        came_from: dict[int, tuple[int, int]] = {spu: (-1, -1)}
        queue = deque([spu])
        while queue and limit > 0:
            giver = queue.popleft()
            limit -= 1
            for pid in list(self.owned.get(giver, ())):
                for taker in self.reps[pid]:
                    if taker in came_from or not self.room(pid, taker):
                        continue
                    came_from[taker] = (giver, pid)
                    if self.load.get(taker, 0) < ceiling.get(taker, 0):
                        self._push_chain(taker, came_from)
                        return True
                    queue.append(taker)
        return False

    def _push_chain(self, taker: int, came_from: Mapping[int, tuple[int, int]]) -> None:
        while True:
            giver, pid = came_from[taker]
            if giver == -1:
                return
            self.take(pid, taker)
            taker = giver

    def _pull(self, spu: int, floor: Mapping[int, int], limit: int = 200) -> bool:
        """Breadth-first: spu takes a partition from v, v (if now short) from w..."""
        came_from: dict[int, tuple[int, int]] = {spu: (-1, -1)}
        queue = deque([spu])
        while queue and limit > 0:
            taker = queue.popleft()
            limit -= 1
            for pid in self.hosted.get(taker, ()):
                giver = self.leader[pid]
                if giver in came_from or giver is None or not self.room(pid, taker):
                    continue
                came_from[giver] = (taker, pid)
                if self.load.get(giver, 0) > floor.get(giver, 0):
                    self._pull_chain(giver, came_from)
                    return True
                queue.append(giver)
        return False

    def _pull_chain(self, giver: int, came_from: Mapping[int, tuple[int, int]]) -> None:
        while True:
            taker, pid = came_from[giver]
            if taker == -1:
                return
            self.take(pid, taker)
            giver = taker

    def _direct(self, pid: int) -> bool:
        free = [s for s in self.reps[pid] if self.spare(s) > 0 and self.room(pid, s)]
        if free:
            self.take(pid, max(free, key=lambda s: (self.spare(s), -s)))
        return bool(free)

    def _augment(self, pid: int, limit: int = 200) -> bool:
        """Breadth-first search for hand-overs ending at an SPU with spare quota."""
        came_by = {s: pid for s in self.reps[pid] if self.room(pid, s)}
        queue = deque(sorted(came_by))
        while queue and limit > 0:
            spu = queue.popleft()
            limit -= 1
            if self.spare(spu) > 0:
                self._shift(spu, came_by, pid)
                return True
            for other in islice(self.owned.get(spu, ()), 16):
                for nxt in self.reps[other]:
                    if nxt not in came_by and self.room(other, nxt):
                        came_by[nxt] = other
                        queue.append(nxt)
        return False

    def _shift(self, spu: int, came_by: Mapping[int, int], start: int) -> None:
        while True:
            pid = came_by[spu]
            previous = self.leader[pid]
            self.take(pid, spu)
            if pid == start or previous is None:
                return
            spu = previous


def choose_leaders(placed: Sequence[Sequence[Replicas]], old_leaders: Sequence[Sequence[int | None]],
                   replica_quotas: Sequence[Mapping[int, int]], replication: Sequence[int],
                   balance: bool) -> list[tuple[int, ...]]:
    """Leaders for every topic (lists aligned by topic position)."""
    if not balance:
        return [tuple(old if old in reps else reps[0] for reps, old in zip(sets, olds))
                for sets, olds in zip(placed, old_leaders)]
    flat, topic_of, olds = [], [], []
    shares: dict[int, float] = {}
    caps: dict[tuple[int, int], int] = {}
    for index, (sets, quota, rf) in enumerate(zip(placed, replica_quotas, replication)):
        flat.extend(sets)
        topic_of.extend([index] * len(sets))
        olds.extend(old_leaders[index])
        for spu, count in quota.items():
            shares[spu] = shares.get(spu, 0.0) + count / rf
            caps[(index, spu)] = ceil_share(count / rf)
    keepable: dict[int, int] = {}
    for reps, old in zip(flat, olds):
        if old in reps:
            keepable[old] = keepable.get(old, 0) + 1
    quotas = leader_quotas(shares, keepable)
    needy = {s for s, q in quotas.items() if keepable.get(s, 0) < q}
    # Rounded-up shares leave slack so greedy steps rarely get stuck; SPUs
    # still below their rounded-down share then pull leaders in.
    ceiling = {s: ceil_share(q) for s, q in shares.items()}
    matching = LeaderMatching(flat, topic_of, ceiling, caps)
    matching.keep(olds, needy)
    matching.place_rest()
    matching.push_down(ceiling)
    matching.pull_up({s: math.floor(q + EPS) for s, q in shares.items()})
    return _split(matching.leader, [len(sets) for sets in placed])


def _split(leaders: Sequence[int | None], sizes: Sequence[int]) -> list[tuple[int, ...]]:
    result, start = [], 0
    for size in sizes:
        result.append(tuple(s for s in leaders[start:start + size] if s is not None))
        start += size
    return result
