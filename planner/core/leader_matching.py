"""The greedy leader matching that runs before the flow on large clusters (see leaders.py):
keep existing leaders within the rounded-up targets, match the rest, then augmenting
hand-overs push SPUs under their rounded-up and pull them over their rounded-down targets.
"""
from __future__ import annotations

from collections import defaultdict, deque
from itertools import chain, compress, islice, repeat
from operator import contains, not_
from typing import Iterable, Mapping, Sequence

from planner.core.model import Replicas


class LeaderMatching:
    """Partitions (global index) matched to leader SPUs under two bounds:
    ``quota`` per SPU, and per topic a cap per SPU (one int: the same for all)."""

    def __init__(self, replicas: Sequence[Replicas], topic_of: Sequence[int],
                 quota: Mapping[int, int], topic_caps: Mapping[int, int | Mapping[int, int]]
                 ) -> None:
        self.reps, self.topic_of = replicas, topic_of
        self.quota, self.caps = quota, topic_caps
        self.leader: list[int | None] = [None] * len(replicas)
        self.load: dict[int, int] = {}
        self.topic_load: dict[int, dict[int, int]] = {t: {} for t in topic_caps}
        # Insertion-ordered, so searches are deterministic without sorting.
        self.owned: dict[int, dict[int, None]] = {}
        self._hosted: dict[int, list[int]] | None = None

    @property
    def hosted(self) -> dict[int, list[int]]:
        """SPU -> partitions it holds a replica of; built when first searched."""
        if self._hosted is None:
            hosted: dict[int, list[int]] = defaultdict(list)
            for pid, reps in enumerate(self.reps):
                for spu in reps:
                    hosted[spu].append(pid)
            self._hosted = dict(hosted)
        return self._hosted

    def cap(self, topic: int, spu: int) -> int:
        cap = self.caps[topic]
        return cap if isinstance(cap, int) else cap.get(spu, 0)

    def room(self, pid: int, spu: int) -> bool:
        topic = self.topic_of[pid]
        return self.topic_load[topic].get(spu, 0) < self.cap(topic, spu) or \
            self.leader[pid] == spu

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
        loads = self.topic_load[self.topic_of[pid]]
        self.load[spu] = self.load.get(spu, 0) + step
        loads[spu] = loads.get(spu, 0) + step

    def keep(self, old_leaders: Sequence[int | None], needy: set[int]) -> None:
        """Keep each old leader while its SPU and its topic have room, the
        partitions no SPU short of leaders could take over first.

        Keeping a leader touches only that SPU's counters, so each SPU's
        partitions are decided on their own, in that order; where no topic
        cap can bind, an SPU keeps the first of them up to its quota (a slice)."""
        reps_of = self.reps
        order: Iterable[int] = range(len(old_leaders))
        if needy:
            apart = list(map(needy.isdisjoint, reps_of))
            order = chain(compress(order, apart), compress(order, map(not_, apart)))
        order = list(order)
        lead_of = old_leaders.__getitem__
        held = map(contains, map(reps_of.__getitem__, order), map(lead_of, order))
        by_leader: dict[int, list[int]] = defaultdict(list)
        for pid in compress(order, held):
            by_leader[lead_of(pid)].append(pid)  # each SPU's partitions in order
        caps = self.caps
        even = all(isinstance(cap, int) for cap in caps.values())
        least_cap = min(caps.values(), default=0) if even else 0
        topic_of = self.topic_of
        for spu, pids in by_leader.items():
            room = self.quota.get(spu, 0)
            if room <= 0:
                continue
            if least_cap >= 1 and len(set(map(topic_of.__getitem__, pids))) == len(pids):
                self._keep_all(spu, pids[:room])
            else:
                self._keep_each(spu, pids)

    def _keep_all(self, spu: int, pids: Sequence[int]) -> None:
        """Lead ``pids`` (one per topic, none led yet) from ``spu``."""
        list(map(self.leader.__setitem__, pids, repeat(spu)))
        self.load[spu] = self.load.get(spu, 0) + len(pids)
        topic_load = self.topic_load
        for topic in map(self.topic_of.__getitem__, pids):
            topic_load[topic][spu] = 1
        self.owned.setdefault(spu, {}).update(dict.fromkeys(pids))

    def _keep_each(self, spu: int, pids: Sequence[int]) -> None:
        quota, topic_of, topic_load = self.quota.get(spu, 0), self.topic_of, self.topic_load
        for pid in pids:
            if self.load.get(spu, 0) >= quota:
                return
            topic = topic_of[pid]
            if topic_load[topic].get(spu, 0) < self.cap(topic, spu):
                self.take(pid, spu)

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

    def unstick(self, ceiling: Mapping[int, int]) -> None:
        """Hand partitions led beyond their topic cap to another replica with
        topic room, that SPU passing one on if it is then above ``ceiling``."""
        for pid in self._over_cap():
            spu = self.leader[pid]
            topic = self.topic_of[pid]
            if spu is None or self.topic_load[topic].get(spu, 0) <= self.cap(topic, spu):
                continue
            for taker in self.reps[pid]:
                if taker == spu or not self.room(pid, taker):
                    continue
                self.take(pid, taker)
                if self.load.get(taker, 0) <= ceiling.get(taker, 0) or self._push(taker, ceiling):
                    break
                self.take(pid, spu)

    def _over_cap(self) -> list[int]:
        """Partitions led, in order, where their topic's cap is exceeded; hand-overs
        never exceed a cap, so none joins them while ``unstick`` runs."""
        over = set()
        for topic, loads in self.topic_load.items():
            cap = self.caps[topic]
            if isinstance(cap, int) and max(loads.values(), default=0) <= cap:
                continue  # the usual case, checked in C
            over.update((topic, spu) for spu, n in loads.items() if n > self.cap(topic, spu))
        return sorted(pid for topic, spu in over for pid in self.owned.get(spu, ())
                      if self.topic_of[pid] == topic)

    def _push(self, spu: int, ceiling: Mapping[int, int], limit: int = 200) -> bool:
        came_from: dict[int, tuple[int, int]] = {spu: (-1, -1)}
        queue = deque([spu])
        while queue and limit > 0:
            giver = queue.popleft()
            limit -= 1
            # No copy: the loop ends as soon as a chain changes ``owned``.
            for pid in self.owned.get(giver, ()):
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
