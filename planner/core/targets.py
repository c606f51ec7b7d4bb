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
count against anti-affinity. Anti-affinity is enforced for a topic only when
it is possible: there are at least as many groups as the replication factor.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, Sequence

from planner.core.model import Spu

EPS = 1e-9
ONE_GROUP = "*"


@dataclass(frozen=True)
class TopicShares:
    topic: str
    total: int
    shares: Mapping[int, float]
    # SPU -> anti-affinity group; None when anti-affinity is not enforced.
    group_of: Mapping[int, str] | None


def floor_share(x: float) -> int:
    return math.floor(x + EPS)


def ceil_share(x: float) -> int:
    return math.ceil(x - EPS)


def group_key(spu: Spu) -> str:
    # A rackless SPU is a group alone: anti-affinity never involves it.
    return spu.rack if spu.rack is not None else f"~{spu.id}"


def waterfill(total: float, weights: Mapping[Hashable, float],
              cap: float) -> dict[Hashable, float]:
    """Split ``total`` by weight, no part above ``cap``; excess is shared again."""
    shares: dict[Hashable, float] = {}
    active = dict(weights)
    left = total
    while active:
        weight = sum(active.values())
        over = [k for k, w in active.items() if left * w / weight >= cap - EPS]
        if not over:
            shares.update({k: left * w / weight for k, w in active.items()})
            break
        for key in over:
            shares[key] = cap
            left -= cap
            del active[key]
    return shares


def enforce_anti_affinity(spus: Sequence[Spu], replication: int, enabled: bool) -> bool:
    return enabled and len({group_key(s) for s in spus}) >= replication


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
    per_group = waterfill(total, group_weights, partitions)
    shares: dict[int, float] = {}
    for group, share in per_group.items():
        members = {s.id: s.weight for s in spus if group_of[s.id] == group}
        shares.update(waterfill(share, members, partitions))
    return TopicShares(name, total, shares, group_of)


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
        result.append(TopicShares(name, cached.total, cached.shares, cached.group_of))
    return result
