"""Balance targets: each SPU's fair, fractional share of each topic's replicas.

The shares follow the allocation rules of the rebalancing proposal (002):

* rack level: a rack's share is its weight (sum of its SPU weights) over the
  cluster weight, times the topic's replicas; with anti-affinity a rack can
  hold at most one replica of each partition, so a rack whose weighted share
  reaches ``partitions`` gets exactly ``partitions`` and the rest is shared
  again by weight among the other racks (water filling). With as many racks
  as the replication factor every rack therefore gets exactly ``partitions``.
* node level: a rack's share is split over its SPUs by weight, each SPU
  capped at ``partitions`` (one replica of a partition per SPU).

Integer targets are these shares rounded up or down (see ``quotas``), which
is how "weighted remainders" and "nodes in a rack differ by at most one"
come about; which side each share rounds to is chosen to move the fewest
replicas. SPUs without a rack form a group of their own each, so they never
count against anti-affinity. With fewer groups than the replication factor
(but two or more) a partition may hold ``ceil(RF / groups)`` replicas in one
group and must span every group (``spread``), so a group's share lies between
``partitions * floor(RF / groups)`` and ``partitions * ceil(RF / groups)``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, Sequence

from planner.core.model import Spu
from planner.core.spread import group_cap

EPS = 1e-9
ONE_GROUP = "*"


@dataclass(frozen=True)
class TopicShares:
    topic: str
    total: int
    shares: Mapping[int, float]
    # SPU -> anti-affinity group; None when anti-affinity is not enforced.
    group_of: Mapping[int, str] | None
    # Most replicas of one partition in one group (see ``spread``).
    group_cap: int = 1


def floor_share(x: float) -> int:
    return math.floor(x + EPS)


def ceil_share(x: float) -> int:
    return math.ceil(x - EPS)


def group_key(spu: Spu) -> str:
    # A rackless SPU is a group alone: anti-affinity never involves it.
    return spu.rack if spu.rack is not None else f"~{spu.id}"


def waterfill(total: float, weights: Mapping[Hashable, float], cap: float,
              floor: float = 0.0) -> dict[Hashable, float]:
    """Split ``total`` by weight, no part above ``cap`` nor below ``floor``;
    what a clamped part gives up or takes is shared again by weight."""
    shares: dict[Hashable, float] = {}
    active = dict(weights)
    left = total
    while active:
        weight = sum(active.values())
        over = [k for k, w in active.items() if left * w / weight >= cap - EPS]
        under = [] if over else [k for k, w in active.items() if left * w / weight < floor - EPS]
        if not over and not under:
            shares.update({k: left * w / weight for k, w in active.items()})
            break
        for key in over or under:
            shares[key] = cap if over else floor
            left -= shares[key]
            del active[key]
    return shares


def enforce_anti_affinity(spus: Sequence[Spu], replication: int, enabled: bool) -> bool:
    """Racks are honoured when enabled and there are two groups or more; with
    fewer groups than replicas they are spread over (see ``spread``)."""
    groups = len({group_key(s) for s in spus})
    return enabled and (groups >= replication or groups >= 2)


def topic_shares(name: str, partitions: int, replication: int,
                 spus: Sequence[Spu], anti_affinity: bool) -> TopicShares:
    total = partitions * replication
    if not enforce_anti_affinity(spus, replication, anti_affinity):
        weights = {s.id: s.weight for s in spus}
        return TopicShares(name, total, waterfill(total, weights, partitions), None)
    group_of = {s.id: group_key(s) for s in spus}
    group_weights: dict[Hashable, float] = {}
    for spu in spus:
        group_weights[group_of[spu.id]] = group_weights.get(group_of[spu.id], 0.0) + spu.weight
    cap = group_cap(replication, len(group_weights))
    least = replication // len(group_weights)
    per_group = waterfill(total, group_weights, partitions * cap, partitions * least)
    shares: dict[int, float] = {}
    for group, share in per_group.items():
        members = {s.id: s.weight for s in spus if group_of[s.id] == group}
        shares.update(waterfill(share, members, partitions))
    return TopicShares(name, total, shares, group_of, cap)


def all_topic_shares(topics: Iterable[tuple[str, int, int]], spus: Sequence[Spu],
                     anti_affinity: bool) -> list[TopicShares]:
    """Shares for (name, partitions, replication) triples; equal shapes share work."""
    cache: dict[tuple[int, int], TopicShares] = {}
    result = []
    for name, partitions, replication in topics:
        key = (partitions, replication)
        if key not in cache:
            cache[key] = topic_shares(name, partitions, replication, spus, anti_affinity)
        cached = cache[key]
        result.append(TopicShares(name, cached.total, cached.shares, cached.group_of,
                                  cached.group_cap))
    return result


def summed_shares(rows: Sequence[Mapping[int, float]]) -> dict[int, float]:
    """Each SPU's share summed over ``rows``. Topics of one shape share one
    mapping, added once times its count: thousands of topics over thousands
    of SPUs otherwise make millions of additions (the rounding differs by far
    less than the ``EPS`` that ``floor_share`` and ``ceil_share`` allow)."""
    repeats: dict[int, list] = {}
    for shares in rows:
        entry = repeats.setdefault(id(shares), [shares, 0])
        entry[1] += 1
    total: dict[int, float] = {}
    for shares, times in repeats.values():
        for spu, q in shares.items():
            total[spu] = total.get(spu, 0.0) + q * times
    return total
