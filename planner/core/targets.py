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
(but two or more) a partition may hold ``cap`` replicas in one group (usually
``ceil(RF / groups)``) and must span every group (``spread``), so a group's
share lies between ``partitions * min(SPUs, floor(RF / groups))`` and
``partitions * min(SPUs, cap)``: a rack never gets more than its SPUs hold.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Hashable, Iterable, Mapping, Sequence

from planner.core.model import Spu
from planner.core.spread import SpreadRule, spread_rule

EPS = 1e-9
ONE_GROUP = "*"


@dataclass(frozen=True)
class TopicShares:
    topic: str
    total: int
    shares: Mapping[int, float]
    # SPU -> anti-affinity group; None when anti-affinity is not enforced.
    group_of: Mapping[int, str] | None
    # Most replicas of one partition in one group, and fewest groups it
    # spans (see ``spread``).
    group_cap: int = 1
    group_spans: int = 1

    @property
    def rule(self) -> SpreadRule:
        return SpreadRule(self.group_cap, self.group_spans)


def floor_share(x: float) -> int:
    return math.floor(x + EPS)


def ceil_share(x: float) -> int:
    return math.ceil(x - EPS)


def group_key(spu: Spu) -> str:
    # A rackless SPU is a group alone: anti-affinity never involves it.
    return spu.rack if spu.rack is not None else f"~{spu.id}"


def waterfill(total: float, weights: Mapping[Hashable, float],
              cap: float | Mapping[Hashable, float],
              floor: float | Mapping[Hashable, float] = 0.0) -> dict[Hashable, float]:
    """Split ``total`` by weight, no part above its ``cap`` nor below its
    ``floor`` (one for all, or one per key); what a clamped part gives up or
    takes is shared again by weight."""
    caps = cap if isinstance(cap, Mapping) else dict.fromkeys(weights, cap)
    floors = floor if isinstance(floor, Mapping) else dict.fromkeys(weights, floor)
    shares: dict[Hashable, float] = {}
    active = dict(weights)
    left = total
    while active:
        weight = sum(active.values())
        over = [k for k, w in active.items() if left * w / weight >= caps[k] - EPS]
        under = [k for k, w in active.items() if left * w / weight < floors[k] - EPS]
        if not over and not under:
            shares.update({k: left * w / weight for k, w in active.items()})
            break
        # What the parts over their caps give up against what the parts under
        # their floors take: the larger side decides whether the level rises
        # (then the parts over stay at their caps) or falls (the parts under
        # stay at their floors). Fixing one side blindly can overshoot.
        given = sum(max(0.0, left * active[k] / weight - caps[k]) for k in over)
        taken = sum(floors[k] - left * active[k] / weight for k in under)
        fixed = [(k, caps[k]) for k in over] if given >= taken else []
        fixed += [(k, floors[k]) for k in under] if taken >= given else []
        for key, value in fixed:
            shares[key] = value
            left -= value
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
    sizes: dict[Hashable, int] = {}
    for spu in spus:
        group = group_of[spu.id]
        group_weights[group] = group_weights.get(group, 0.0) + spu.weight
        sizes[group] = sizes.get(group, 0) + 1
    rule = spread_rule(replication, sizes.values())
    least = replication // len(group_weights)
    # A rack holds at most one replica of a partition per SPU: a small rack's
    # share stops at what its SPUs can hold, and the others take the rest.
    caps = {g: partitions * min(n, rule.cap) for g, n in sizes.items()}
    floors = {g: partitions * min(n, least) for g, n in sizes.items()}
    per_group = waterfill(total, group_weights, caps, floors)
    shares: dict[int, float] = {}
    for group, share in per_group.items():
        members = {s.id: s.weight for s in spus if group_of[s.id] == group}
        shares.update(waterfill(share, members, partitions))
    return TopicShares(name, total, shares, group_of, rule.cap, rule.spans)


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
                                  cached.group_cap, cached.group_spans))
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
