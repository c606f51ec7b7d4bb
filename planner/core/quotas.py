"""Rounding fractional shares to integer quotas while moving the fewest replicas.

Every row (a topic) has fractional shares per SPU. A quota may be a share
rounded down or up, a topic group's sum (its rack) likewise, and the row
sums to its exact total. Across rows, each SPU's sum of quotas and each
cluster group's (rack's) sum must be its summed share rounded down or up:
balance holds per topic and cluster-wide at once. Such a rounding always
exists (two laminar families of sums, as in matrix rounding).

An SPU's "extra" in a row is its quota above the rounded-down share. An extra
is free when the SPU already holds more than the rounded-down share, and
costs one arriving replica otherwise. The rounding is exact: extras are a
min-cost flow (``mincost``) through row -> row group -> SPU -> rack, with
every row, row-group, SPU and rack bound on its edges (the two laminar
families make the flow integral), so it meets every bound at once and moves
the fewest replicas a rounding can. Ties are broken by creation order (rows
in the given order, SPUs by id). Should the flow find no rounding (float
noise on the bounds), a greedy that hands out extras row by row, cheapest
first, then repairs cluster bounds by swaps, is the fallback.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from planner.core.mincost import MinCostFlow
from planner.core.targets import ONE_GROUP, ceil_share, floor_share


@dataclass(frozen=True)
class Row:
    key: str
    total: int
    shares: Mapping[int, float]
    group_of: Mapping[int, str] | None
    current: Mapping[int, int]


class _Limits:
    """Each share rounded down and up, and the SPUs whose two differ, once per
    distinct shares mapping (topics of one shape share theirs)."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[Mapping, dict, dict, list]] = {}

    def of(self, row: Row) -> tuple[dict[int, int], dict[int, int], list[int]]:
        entry = self._seen.get(id(row.shares))
        if entry is None or entry[0] is not row.shares:
            low = {s: floor_share(q) for s, q in row.shares.items()}
            high = {s: ceil_share(q) for s, q in row.shares.items()}
            flexible = [s for s in row.shares if high[s] > low[s]]
            entry = self._seen[id(row.shares)] = (row.shares, low, high, flexible)
        return entry[1], entry[2], entry[3]


@dataclass
class _Bounds:
    base: dict
    need: dict
    room: dict
    flex_left: dict
    free_left: dict


def bounds_of(rows: Sequence[Row], cluster_group: Mapping[int, str]) -> tuple[dict, dict]:
    """Cluster-wide (low, high) per SPU and per cluster group."""
    spu_sum: dict[int, float] = {}
    for row in rows:
        for spu, share in row.shares.items():
            spu_sum[spu] = spu_sum.get(spu, 0.0) + share
    group_sum: dict[str, float] = {}
    for spu, total in spu_sum.items():
        group = cluster_group[spu]
        group_sum[group] = group_sum.get(group, 0.0) + total
    spu_bounds = {s: (floor_share(v), ceil_share(v)) for s, v in spu_sum.items()}
    group_bounds = {g: (floor_share(v), ceil_share(v)) for g, v in group_sum.items()}
    return spu_bounds, group_bounds


def round_rows(rows: Sequence[Row], cluster_group: Mapping[int, str]) -> dict[str, dict[int, int]]:
    """Integer quotas per row key and SPU (see the module text)."""
    spu_bounds, group_bounds = bounds_of(rows, cluster_group)
    limits = _Limits()
    exact = flow_round(rows, cluster_group, spu_bounds, group_bounds, limits)
    if exact is not None:
        return exact
    return greedy_round(rows, cluster_group, spu_bounds, group_bounds, limits)


def flow_round(rows: Sequence[Row], cluster_group: Mapping[int, str],
               spu_bounds: Mapping[int, tuple[int, int]],
               group_bounds: Mapping[str, tuple[int, int]],
               limits: _Limits) -> dict[str, dict[int, int]] | None:
    """The cheapest rounding within every bound, or None if the flow finds none."""
    net = MinCostFlow()
    source, sink = net.node(), net.node()
    base = {s: 0 for s in spu_bounds}
    result: dict[str, dict[int, int]] = {}
    for row in rows:
        low, _, _ = limits.of(row)
        result[row.key] = dict(low)
        for spu, floor in low.items():
            base[spu] += floor
    spu_node = {s: net.node() for s in sorted(spu_bounds)}
    rack_base: dict[str, int] = {}
    for spu, total in base.items():
        rack_base[cluster_group[spu]] = rack_base.get(cluster_group[spu], 0) + total
    rack_node = {g: net.node() for g in sorted(group_bounds)}
    for g, node in rack_node.items():
        lo, hi = group_bounds[g]
        net.edge(node, sink, max(0, lo - rack_base.get(g, 0)), max(0, hi - rack_base.get(g, 0)))
    room = {}
    for spu, node in spu_node.items():
        lo, hi = spu_bounds[spu]
        room[spu] = max(0, hi - base[spu])
        net.edge(node, rack_node[cluster_group[spu]], max(0, lo - base[spu]), room[spu])
    cells: list[tuple[str, int, int]] = []
    for row in rows:
        low, _, flexible = limits.of(row)
        extras = row.total - sum(low.values())
        if extras <= 0:
            continue
        row_node = net.node()
        net.edge(source, row_node, extras, extras)
        group_of = row.group_of or {}
        members: dict[str, list[int]] = {}
        for spu in flexible:
            members.setdefault(group_of.get(spu, ONE_GROUP), []).append(spu)
        group_lo, group_hi = _group_extra_bounds(row, group_of or {s: ONE_GROUP for s in row.shares}, low)
        single = len(group_lo) == 1
        for g in sorted(members):
            if group_hi[g] <= 0 and group_lo[g] <= 0:
                continue
            if single:
                group_node = row_node
            else:
                group_node = net.node()
                net.edge(row_node, group_node, max(0, group_lo[g]), group_hi[g])
            for spu in sorted(members[g]):
                if room[spu] <= 0:
                    continue
                paid = 0 if row.current.get(spu, 0) > low[spu] else 1
                cells.append((row.key, spu, net.edge(group_node, spu_node[spu], 0, 1, paid)))
        for g in group_lo:
            if g not in members and group_lo[g] > 0:
                return None
    net.edge(sink, source, 0, sum(r.total for r in rows))
    if not net.solve():
        return None
    for key, spu, e in cells:
        if net.flow(e):
            result[key][spu] += 1
    return result


def greedy_round(rows: Sequence[Row], cluster_group: Mapping[int, str],
                 spu_bounds: Mapping[int, tuple[int, int]],
                 group_bounds: Mapping[str, tuple[int, int]],
                 limits: _Limits) -> dict[str, dict[int, int]]:
    """Extras row by row, cheapest first, then swaps to meet cluster bounds."""
    spus = _tracker(rows, spu_bounds, lambda s: s, limits)
    groups = _tracker(rows, group_bounds, lambda s: cluster_group[s], limits)
    result = {}
    for row in rows:
        result[row.key] = _round_row(row, spus, groups, cluster_group, limits)
    _repair(rows, result, spu_bounds, group_bounds, cluster_group, limits)
    return result


def _tracker(rows: Sequence[Row], bounds: Mapping, key_of, limits: _Limits) -> _Bounds:
    base: dict = {k: 0 for k in bounds}
    flex: dict = {k: 0 for k in bounds}
    free: dict = {k: 0 for k in bounds}
    for row in rows:
        low, _, flexible = limits.of(row)
        for spu, floor in low.items():
            base[key_of(spu)] += floor
        for spu in flexible:
            flex[key_of(spu)] += 1
            free[key_of(spu)] += row.current.get(spu, 0) > low[spu]
    need = {k: bounds[k][0] - base[k] for k in bounds}
    room = {k: bounds[k][1] - base[k] for k in bounds}
    return _Bounds(base, need, room, flex, free)


def _round_row(row: Row, spus: _Bounds, groups: _Bounds,
               cluster_group: Mapping[int, str], limits: _Limits) -> dict[int, int]:
    low, _, flexible = limits.of(row)
    quota = dict(low)
    extras = row.total - sum(quota.values())
    ranked = sorted(flexible, key=lambda s: _rank(s, row, quota, spus, groups, cluster_group))
    used: dict[str, int] = {}

    def fits_cluster(spu: int) -> bool:
        group = cluster_group[spu]
        return spus.room[spu] > 0 and groups.room[group] - used.get(group, 0) > 0

    def note(spu: int) -> None:
        used[cluster_group[spu]] = used.get(cluster_group[spu], 0) + 1

    picked = _pick(row, ranked, quota, extras, fits_cluster, note)
    for spu in picked:
        quota[spu] += 1
        spus.need[spu] -= 1
        spus.room[spu] -= 1
        groups.need[cluster_group[spu]] -= 1
        groups.room[cluster_group[spu]] -= 1
    chosen = set(picked)
    for spu in flexible:
        is_free = row.current.get(spu, 0) > quota[spu] - (spu in chosen)
        spus.flex_left[spu] -= 1
        spus.free_left[spu] -= is_free
        groups.flex_left[cluster_group[spu]] -= 1
        groups.free_left[cluster_group[spu]] -= is_free
    return quota


def _rank(spu: int, row: Row, quota: Mapping[int, int], spus: _Bounds,
          groups: _Bounds, cluster_group: Mapping[int, str]) -> tuple:
    group = cluster_group[spu]
    forced = spus.need[spu] >= spus.flex_left[spu] or groups.need[group] >= groups.flex_left[group]
    blocked = spus.room[spu] <= 0 or groups.room[group] <= 0
    cost = 0 if row.current.get(spu, 0) > quota[spu] else 1
    urgency = spus.need[spu] / spus.flex_left[spu]
    # A paid extra is better spent on an SPU that gets no free one later.
    later_free = spus.free_left[spu] - (cost == 0)
    return (not forced, blocked, cost, -urgency, later_free, -groups.need[group], spu)


def _pick(row: Row, ranked: list[int], quota: Mapping[int, int], extras: int,
          fits_cluster, note) -> list[int]:
    group_of = row.group_of or {s: ONE_GROUP for s in row.shares}
    low, high = _group_extra_bounds(row, group_of, quota)
    picked: list[int] = []
    chosen: set[int] = set()
    taken = {g: 0 for g in low}

    def take(spu: int) -> None:
        picked.append(spu)
        chosen.add(spu)
        taken[group_of[spu]] += 1
        note(spu)

    # Every topic group's minimum first, then the rest; cluster bounds are
    # honoured while possible and only then relaxed.
    for strict in (True, False):
        for spu in ranked:
            group = group_of[spu]
            if spu not in chosen and taken[group] < low[group] and (fits_cluster(spu) or not strict):
                take(spu)
    for strict in (True, False):
        for spu in ranked:
            if len(picked) >= extras:
                return picked
            group = group_of[spu]
            if spu not in chosen and taken[group] < high[group] and (fits_cluster(spu) or not strict):
                take(spu)
    return picked


def _group_extra_bounds(row: Row, group_of: Mapping[int, str],
                        quota: Mapping[int, int]) -> tuple[dict, dict]:
    share: dict[str, float] = {}
    base: dict[str, int] = {}
    for spu, q in row.shares.items():
        group = group_of[spu]
        share[group] = share.get(group, 0.0) + q
        base[group] = base.get(group, 0) + quota[spu]
    low = {g: floor_share(v) - base[g] for g, v in share.items()}
    high = {g: ceil_share(v) - base[g] for g, v in share.items()}
    return low, high


def _repair(rows: Sequence[Row], result: dict[str, dict[int, int]],
            spu_bounds: Mapping[int, tuple[int, int]], group_bounds: Mapping[str, tuple[int, int]],
            cluster_group: Mapping[int, str], limits: _Limits) -> None:
    """Swap extras inside a row until every SPU and rack meets its cluster bounds."""
    totals = {s: 0 for s in spu_bounds}
    for quota in result.values():
        for spu, q in quota.items():
            totals[spu] += q
    for _ in range(4 * len(spu_bounds) + 4):
        over, under, racks = _violations(totals, spu_bounds, group_bounds, cluster_group)
        swap = _best_swap(rows, result, totals, spu_bounds, over, under, cluster_group, racks,
                          limits)
        if swap is None:
            return
        key, giver, taker = swap
        result[key][giver] -= 1
        result[key][taker] += 1
        totals[giver] -= 1
        totals[taker] += 1


def _violations(totals, spu_bounds, group_bounds, cluster_group) -> tuple[set, set, bool]:
    """SPUs that must give / take: above or below their own bounds, else in a
    rack above or below its bounds."""
    over = {s for s, t in totals.items() if t > spu_bounds[s][1]}
    under = {s for s, t in totals.items() if t < spu_bounds[s][0]}
    if over or under:
        return over, under, False
    rack_total: dict[str, int] = {}
    for spu, total in totals.items():
        rack_total[cluster_group[spu]] = rack_total.get(cluster_group[spu], 0) + total
    high = {g for g, t in rack_total.items() if t > group_bounds[g][1]}
    low = {g for g, t in rack_total.items() if t < group_bounds[g][0]}
    over = {s for s in totals if cluster_group[s] in high and totals[s] > spu_bounds[s][0]}
    under = {s for s in totals if cluster_group[s] in low and totals[s] < spu_bounds[s][1]}
    return over, under, True


def _best_swap(rows, result, totals, spu_bounds, over, under, cluster_group, racks, limits):
    if not over and not under:
        return None
    best = None
    for row in rows:
        quota = result[row.key]
        group_of = row.group_of or {}
        for giver, taker in _swap_pairs(row, quota, over, under, totals, spu_bounds, limits):
            same_rack = cluster_group[giver] == cluster_group[taker]
            if group_of.get(giver) != group_of.get(taker) or (same_rack and racks):
                continue
            candidate = (_swap_cost(row, quota, giver, taker), row.key, giver, taker)
            if best is None or candidate < best:
                best = candidate
    return None if best is None else best[1:]


def _swap_pairs(row, quota, over, under, totals, spu_bounds, limits):
    """(giver, taker) pairs in a row that fix one bound without breaking one."""
    low, high, flexible = limits.of(row)
    givers = [s for s in flexible if quota[s] > low[s]]
    takers = [s for s in flexible if quota[s] < high[s]]
    if over:
        givers = [s for s in givers if s in over]
        takers = [s for s in takers if totals[s] < spu_bounds[s][1]]
    else:
        takers = [s for s in takers if s in under]
        givers = [s for s in givers if totals[s] > spu_bounds[s][0]]
    for giver in givers:
        for taker in takers:
            yield giver, taker


def _swap_cost(row: Row, quota: Mapping[int, int], giver: int, taker: int) -> int:
    saved = 1 if quota[giver] > row.current.get(giver, 0) else 0
    spent = 1 if quota[taker] >= row.current.get(taker, 0) else 0
    return spent - saved
