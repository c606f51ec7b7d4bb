"""Choosing each partition's leader among its (already placed) replicas.

Leadership moves by reordering a replica list, never by moving data, so it
runs after placement, over the whole cluster at once (it needs only SPU ids).
Targets are exact and cluster-wide: of the P partitions an SPU of weight w
should lead P * w / W (W the summed weight; P / N with equal weights, so the
leader spread is at most 1), rounded down or up; within a topic of P_t
partitions likewise P_t * w / W. An SPU can only lead partitions it holds a
replica of, so the bounds are met where the placement allows.

The exact tool is a min-cost flow (``flow_leaders``): partition -> (topic,
SPU) for each of its replicas -> SPU -> sink, with lexicographic costs: each
unit an SPU leads beyond its rounded-down cluster share costs ``big``, beyond
its rounded-up share more (soft bounds, so a flow always exists, and it meets
them whenever placement allows); the same tiers per (topic, SPU) at a weight
below any cluster difference; and 1 per partition whose leader changes.
Partitions of one topic with the same replica set and the same old leader
have identical edges, so the flow runs on such classes (one node, their
count as supply) and splits each class's flow over its partitions afterwards:
the same optimum on a far smaller network where layouts repeat.

On large clusters the flow is slow in plain Python, so a greedy matching runs
first (``LeaderMatching``: keep existing leaders within the rounded-up
targets, match the rest, then augmenting hand-overs to push SPUs under their
rounded-up and pull them over their rounded-down targets). When its result
meets every bound the placement permits (each clipped to the replicas held)
it is balance-optimal and kept; otherwise the flow decides.
"""
from __future__ import annotations

from collections import Counter, defaultdict, deque
from functools import cached_property
from itertools import chain, compress, groupby, islice, repeat
from operator import contains, not_
from typing import Iterable, Mapping, Sequence

from planner.core.mincost import MinCostFlow
from planner.core.model import Replicas
from planner.core.targets import ceil_share, floor_share


class _Targets:
    """What both leader choosers start from: every hosting SPU's weight, the
    cluster-wide bounds, and the replicas held per SPU and, per topic, per SPU."""

    def __init__(self, replicas: Sequence[Replicas], topic_of: Sequence[int],
                 weights: Mapping[int, float]) -> None:
        self.replicas, self.topic_of = replicas, topic_of
        self.held: Counter[int] = Counter(chain.from_iterable(replicas))
        self.weights = _with_hosts(weights, replicas, self.held)
        self.whole = sum(self.weights.values())
        self.equal = len(set(self.weights.values())) == 1
        self.cluster = self.bounds(len(replicas))

    @cached_property
    def topic_held(self) -> dict[int, Counter[int]]:
        """Topic -> replicas per SPU. Counted a run of one topic at a time, so
        Counter does the per-replica work in C; only when a check needs it."""
        held: dict[int, Counter[int]] = {}
        for topic, start, end in _runs(self.topic_of):
            held.setdefault(topic, Counter()).update(
                chain.from_iterable(self.replicas[start:end]))
        return held

    def caps(self, total: int) -> int | dict[int, int]:
        """The rounded-up share of ``total`` leaders: one figure for every SPU
        when weights are equal, else per SPU."""
        if self.equal:
            return -(-total // len(self.weights))
        return {s: hi for s, (_, hi) in self.bounds(total).items()}

    def bounds(self, total: int) -> dict[int, tuple[int, int]]:
        """Each SPU's share of ``total`` leaders by weight, rounded down and up."""
        if self.equal:
            n = len(self.weights)
            low, high = total // n, -(-total // n)
            return {s: (low, high) for s in self.weights}
        return {s: (floor_share(total * w / self.whole), ceil_share(total * w / self.whole))
                for s, w in self.weights.items()}


def _tiers(net: MinCostFlow, u: int, v: int, held: int, low: int, high: int,
           step: int, over: int) -> None:
    """u -> v carrying up to ``held`` units: free up to ``low``, ``step`` each up
    to ``high``, ``over`` each beyond."""
    low = min(low, held)
    high = min(high, held)
    if low > 0:
        net.edge(u, v, 0, low, 0)
    if high > low:
        net.edge(u, v, 0, high - low, step)
    if held > high:
        net.edge(u, v, 0, 1, over)
        if held > high + 1:
            net.edge(u, v, 0, held - high - 1, 2 * over)


def _classes(replicas: Sequence[Replicas], topic_of: Sequence[int],
             old_leaders: Sequence[int | None], aggregate: bool
             ) -> tuple[list[tuple[Replicas, int, int | None]], list[list[int]]]:
    """Interchangeable partitions grouped: same topic, same replica set, same
    old leader (None when it is not a replica) have the same edges and costs,
    so one flow node with their count as supply stands for all of them."""
    index: dict[tuple, int] = {}
    classes: list[tuple[Replicas, int, int | None]] = []
    members: list[list[int]] = []
    for pid, (reps, topic, old) in enumerate(zip(replicas, topic_of, old_leaders)):
        if old not in reps:
            old = None
        key = (topic, frozenset(reps), old) if aggregate else pid
        c = index.get(key)
        if c is None:
            c = index[key] = len(classes)
            classes.append((tuple(sorted(reps)) if aggregate else reps, topic, old))
            members.append([])
        members[c].append(pid)
    return classes, members


def flow_leaders(replicas: Sequence[Replicas], topic_of: Sequence[int],
                 old_leaders: Sequence[int | None], topic_sizes: Sequence[int],
                 weights: Mapping[int, float], aggregate: bool = True) -> list[int]:
    """A leader for each partition (see the module text). ``aggregate=False``
    gives every partition a node of its own: the plain formulation, kept as
    the reference the class flow is tested against."""
    total = len(replicas)
    if total == 0:
        return []
    t = _Targets(replicas, topic_of, weights)
    cluster, held, topic_held = t.cluster, t.held, t.topic_held
    per_topic: dict[int, dict[int, tuple[int, int]]] = {}
    change = 1
    topic_step = total + 1                          # > every leader change together
    topic_over = 2 * topic_step
    cluster_step = total * (2 * topic_over + change) + 1   # > every topic cost together
    cluster_over = 2 * cluster_step

    net = MinCostFlow()
    sink = net.node()
    net.balance[sink] -= total
    spu_node = {}
    for spu in sorted(held):
        spu_node[spu] = node = net.node()
        low, high = cluster[spu]
        _tiers(net, node, sink, held[spu], low, high, cluster_step, cluster_over)
    # A (topic, SPU) whose units all cost the same needs no node of its own:
    # its partitions' edges go straight to the SPU, that cost added.
    pair_node: dict[tuple[int, int], tuple[int, int]] = {}
    classes, members = _classes(replicas, topic_of, old_leaders, aggregate)
    choices: list[list[tuple[int, int]]] = []
    for (reps, topic, old), pids in zip(classes, members):
        cls = net.node()
        count = len(pids)
        net.balance[cls] += count
        mine = []
        for spu in reps:
            key = (topic, spu)
            target = pair_node.get(key)
            if target is None:
                bounds = per_topic.get(topic)
                if bounds is None:
                    bounds = per_topic[topic] = t.bounds(topic_sizes[topic])
                target = pair_node[key] = _pair_target(net, spu_node[spu], topic_held[topic][spu],
                                                       bounds[spu], topic_step, topic_over)
            node, extra = target
            mine.append((spu, net.edge(cls, node, 0, count, extra + (0 if spu == old else change))))
        choices.append(mine)
    if not net.solve():
        raise RuntimeError("leader flow found no assignment")  # cannot happen: all soft
    leaders: list[int] = [0] * total
    for mine, pids in zip(choices, members):
        # Any split of a class's flow costs the same: hand it out in partition order.
        queue = iter(pids)
        for spu, e in mine:
            for _ in range(net.flow(e)):
                leaders[next(queue)] = spu
    return leaders


def _pair_target(net: MinCostFlow, spu_node: int, count: int, bounds: tuple[int, int],
                 step: int, over: int) -> tuple[int, int]:
    """Where a (topic, SPU)'s edges go, and the cost they add."""
    low, high = bounds
    if low >= count:
        return spu_node, 0
    if low == 0 and high >= count:
        return spu_node, step
    if count == 1:
        return spu_node, over
    node = net.node()
    _tiers(net, node, spu_node, count, low, high, step, over)
    return node, 0


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


def choose_leaders(placed: Sequence[Sequence[Replicas]], old_leaders: Sequence[Sequence[int | None]],
                   replica_quotas: Sequence[Mapping[int, int]], replication: Sequence[int],
                   balance: bool, weights: Mapping[int, float] | None = None
                   ) -> list[tuple[int, ...]]:
    """Leaders for every topic (lists aligned by topic position). ``weights``
    names every SPU that may lead (default: the SPUs of ``replica_quotas``,
    weight 1)."""
    if not balance:
        return [tuple(old if old in reps else reps[0] for reps, old in zip(sets, olds))
                for sets, olds in zip(placed, old_leaders)]
    if weights is None:
        weights = {s: 1.0 for quota in replica_quotas for s in quota}
    flat, topic_of, olds = [], [], []
    for index, sets in enumerate(placed):
        flat.extend(sets)
        topic_of.extend([index] * len(sets))
        olds.extend(old_leaders[index])
    sizes = [len(sets) for sets in placed]
    leaders = greedy_leaders(flat, topic_of, olds, sizes, weights)
    if leaders is None:
        leaders = flow_leaders(flat, topic_of, olds, sizes, weights)
    return _split(leaders, sizes)


def greedy_leaders(replicas: Sequence[Replicas], topic_of: Sequence[int],
                   old_leaders: Sequence[int | None], topic_sizes: Sequence[int],
                   weights: Mapping[int, float]) -> list[int] | None:
    """The greedy matching's leaders, or None unless they meet every bound the
    placement permits."""
    if not replicas:
        return []
    t = _Targets(replicas, topic_of, weights)
    cluster, held = t.cluster, t.held
    keepable = Counter(compress(old_leaders, map(contains, replicas, old_leaders)))
    floor = {s: lo for s, (lo, _) in cluster.items()}
    ceiling = {s: hi for s, (_, hi) in cluster.items()}
    needy = {s for s, lo in floor.items() if keepable.get(s, 0) < lo}
    caps = {topic: t.caps(topic_sizes[topic]) for topic in dict.fromkeys(topic_of)}
    matching = LeaderMatching(replicas, topic_of, ceiling, caps)
    matching.keep(old_leaders, needy)
    matching.place_rest()
    matching.push_down(ceiling)
    matching.unstick(ceiling)
    matching.pull_up(floor)
    for spu, (lo, hi) in cluster.items():
        if not min(lo, held.get(spu, 0)) <= matching.load.get(spu, 0) <= hi:
            return None
    if not all(_topic_within(t, topic, topic_sizes[topic], matching.topic_load[topic])
               for topic in caps):
        return None
    return list(matching.leader)  # type: ignore[arg-type]


def _topic_within(t: _Targets, topic: int, size: int, loads: Mapping[int, int]) -> bool:
    """Every SPU of the topic leads within its bounds, the lower one clipped
    to the replicas it holds (counted only when a lower bound is above 0)."""
    if t.equal:
        n = len(t.weights)
        low, high = size // n, -(-size // n)
        if max(loads.values(), default=0) > high:
            return False
        return low == 0 or all(loads.get(s, 0) >= min(low, c)
                               for s, c in t.topic_held[topic].items())
    held = t.topic_held[topic]
    bounds = t.bounds(size)
    return all(min(bounds[s][0], c) <= loads.get(s, 0) <= bounds[s][1] for s, c in held.items())


def _runs(topic_of: Sequence[int]) -> list[tuple[int, int, int]]:
    """(topic, start, end) of each run of consecutive partitions of one topic."""
    runs, start = [], 0
    for topic, run in groupby(topic_of):
        end = start + len(list(run))
        runs.append((topic, start, end))
        start = end
    return runs


def _with_hosts(weights: Mapping[int, float], replicas: Sequence[Replicas],
                held: Mapping[int, int] | None = None) -> dict[int, float]:
    """``weights`` plus, at weight 1, any SPU holding a replica without one;
    ``held``: the SPUs holding replicas, when already counted."""
    weights = dict(weights)
    for spu in held if held is not None else chain.from_iterable(replicas):
        weights.setdefault(spu, 1.0)
    return weights


def _split(leaders: Sequence[int | None], sizes: Sequence[int]) -> list[tuple[int, ...]]:
    result, start = [], 0
    gaps = None in leaders
    for size in sizes:
        part = leaders[start:start + size]
        result.append(tuple(s for s in part if s is not None) if gaps else tuple(part))
        start += size
    return result
