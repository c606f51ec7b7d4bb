"""The exact per-topic placement: fewest new copies for given SPU quotas (a min-cost flow).

``rebalance``'s refill is greedy with hand-over chains; it reaches the count-level
minimum almost always, and where it does not (a placement conflict forced a detour,
or its search stopped at its budget) this flow finds the cheapest placement for the
same quotas and the same rack rule:

    source -> partition [RF, RF] -> (partition, rack) [low, cap] -> SPU -> sink [quota, quota]

where an SPU edge costs 1 unless the partition held that SPU before (a copy), ``cap``
is the rule's most replicas of a partition in one rack and ``low`` is 1 when the
partition must span every rack (more replicas than racks; see ``spread``). Flows are
integral, so the optimum is a placement. The network grows with partitions x SPUs,
so the caller runs it only below ``MAX_EDGES`` (``MAX_EDGES_OFF_QUOTA`` to repair a
placement that missed a quota).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from planner.core.mincost import MinCostFlow
from planner.core.spread import SpreadRule, misplaced

# Partition -> SPU edges the flow may build: to save copies where the greedy placement
# met every quota (a quarter of a second at the top), and where it could not (its search
# stopped at the budget or found no chain: the flow puts the topic back on its quotas;
# some seconds at the top, against minutes for a search without a budget).
MAX_EDGES = 60_000
MAX_EDGES_OFF_QUOTA = 1_000_000


def copies(current: Sequence[Sequence[int]], placed: Sequence[Sequence[int]]) -> int:
    """New copies: replicas placed on an SPU that did not hold that partition."""
    return sum(len(set(after) - set(before)) for before, after in zip(current, placed))


def count_bound(current: Sequence[Sequence[int]], quota: Mapping[int, int]) -> int:
    """Copies any placement meeting ``quota`` makes: an SPU can keep at most the
    partitions it holds now."""
    held: dict[int, int] = {}
    for reps in current:
        for spu in set(reps):
            held[spu] = held.get(spu, 0) + 1
    return sum(max(0, q - held.get(spu, 0)) for spu, q in quota.items())


def affordable(partitions: int, quota: Mapping[int, int], off_quota: bool = False) -> bool:
    edges = partitions * sum(1 for q in quota.values() if q > 0)
    return edges <= (MAX_EDGES_OFF_QUOTA if off_quota else MAX_EDGES)


def exact_placement(current: Sequence[Sequence[int]], replication: int,
                    quota: Mapping[int, int], group_of: Mapping[int, str] | None,
                    rule: SpreadRule) -> tuple[tuple[int, ...], ...] | None:
    """The cheapest placement meeting every quota and the rack rule, survivors in their
    old order and newcomers after (by id); None where no placement meets them."""
    takers = sorted(s for s, q in quota.items() if q > 0)
    if sum(quota[s] for s in takers) != replication * len(current):
        return None
    groups: dict[str, list[int]] = {}
    for spu in takers:
        groups.setdefault(group_of[spu] if group_of is not None else f"~{spu}", []).append(spu)
    every = group_of is not None and rule.spans >= len(groups) and replication > len(groups)
    cap = rule.cap if group_of is not None else 1
    net = MinCostFlow()
    source, sink = net.node(), net.node()
    spu_node = {s: net.node() for s in takers}
    edges: list[list[tuple[int, int]]] = []
    for reps in current:
        mine, part = set(reps), net.node()
        net.edge(source, part, replication, replication)
        found: list[tuple[int, int]] = []
        for members in groups.values():
            rack = net.node()
            net.edge(part, rack, 1 if every else 0, min(cap, len(members)))
            first = net.unit_edges(rack, [spu_node[s] for s in members],
                                   [0 if s in mine else 1 for s in members])
            found += [(first + 2 * k, s) for k, s in enumerate(members)]
        edges.append(found)
    for spu in takers:
        net.edge(spu_node[spu], sink, quota[spu], quota[spu])
    net.edge(sink, source, 0, replication * len(current))
    if not net.solve():
        return None
    placed = []
    for before, found in zip(current, edges):
        chosen = {s for e, s in found if net.flow(e)}
        after = (*(s for s in before if s in chosen), *sorted(chosen - set(before)))
        if group_of is not None and misplaced([group_of[s] for s in after], replication, rule):
            return None
        placed.append(after)
    return tuple(placed)
