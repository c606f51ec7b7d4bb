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

from collections import Counter
from functools import cached_property
from itertools import chain, compress, groupby
from operator import contains
from typing import Mapping, Sequence

from planner.core.leader_matching import LeaderMatching
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
