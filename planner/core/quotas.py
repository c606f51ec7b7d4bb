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
in the given order, SPUs by id).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from planner.core.mincost import MinCostFlow
from planner.core.quick_quotas import group_extra_bounds, quick_round
from planner.core.targets import ONE_GROUP, ceil_share, floor_share, summed_shares


@dataclass(frozen=True)
class Row:
    key: str
    total: int
    shares: Mapping[int, float]
    group_of: Mapping[int, str] | None
    current: Mapping[int, int]
    # Replicas that can stay where the rack spread is concerned (None: all);
    # see ``flow_round``.
    secure: Mapping[int, int] | None = None


class _Limits:
    """Each share rounded down, and the SPUs whose share is fractional, once
    per distinct shares mapping (topics of one shape share theirs)."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[Mapping, dict, list]] = {}

    def of(self, row: Row) -> tuple[dict[int, int], list[int]]:
        entry = self._seen.get(id(row.shares))
        if entry is None or entry[0] is not row.shares:
            low = {s: floor_share(q) for s, q in row.shares.items()}
            flexible = [s for s, q in row.shares.items() if ceil_share(q) > low[s]]
            entry = self._seen[id(row.shares)] = (row.shares, low, flexible)
        return entry[1], entry[2]


def bounds_of(rows: Sequence[Row], cluster_group: Mapping[int, str]) -> tuple[dict, dict]:
    """Cluster-wide (low, high) per SPU and per cluster group."""
    spu_sum = summed_shares([row.shares for row in rows])
    group_sum: dict[str, float] = {}
    for spu, total in spu_sum.items():
        group = cluster_group[spu]
        group_sum[group] = group_sum.get(group, 0.0) + total
    spu_bounds = {s: (floor_share(v), ceil_share(v)) for s, v in spu_sum.items()}
    group_bounds = {g: (floor_share(v), ceil_share(v)) for g, v in group_sum.items()}
    return spu_bounds, group_bounds


# Below this many (topic, SPU) cells the flow is quick enough to run alone.
QUICK_CELLS = 200_000


def round_rows(rows: Sequence[Row], cluster_group: Mapping[int, str],
               quick_cells: int = QUICK_CELLS) -> dict[str, dict[int, int]]:
    """Integer quotas per row key and SPU (see the module text); on large
    clusters the certified shortcut of ``quick_quotas`` first."""
    spu_bounds, group_bounds = bounds_of(rows, cluster_group)
    limits = _Limits()
    if sum(len(limits.of(row)[1]) for row in rows) >= quick_cells:
        quick = quick_round(rows, cluster_group, spu_bounds, group_bounds, limits,
                            floor_share, ceil_share)
        if quick is not None:
            return quick
    exact = flow_round(rows, cluster_group, spu_bounds, group_bounds, limits)
    if exact is None:
        # Cannot happen: the shares form a fractional rounding (each row sums
        # to its total, no share above what its SPU or rack can hold: see
        # ``targets``), so the flow has an integral one.
        raise RuntimeError("quota flow found no rounding")
    return exact


def round_rows_sparse(rows: Sequence[Row], cluster_group: Mapping[int, str],
                      quick_cells: int = QUICK_CELLS) -> tuple[dict[str, dict[int, int]], bool]:
    """``round_rows`` without its zero quotas where the shortcut decides (then
    True: a row's full quota is ``{s: q.get(s, 0) for s in row.shares}``, the
    same mapping in the same order); else the full quotas and False."""
    spu_bounds, group_bounds = bounds_of(rows, cluster_group)
    limits = _Limits()
    if sum(len(limits.of(row)[1]) for row in rows) >= quick_cells:
        quick = quick_round(rows, cluster_group, spu_bounds, group_bounds, limits,
                            floor_share, ceil_share, sparse=True)
        if quick is not None:
            return quick, True
    exact = flow_round(rows, cluster_group, spu_bounds, group_bounds, limits)
    if exact is None:
        raise RuntimeError("quota flow found no rounding")  # cannot happen: see round_rows
    return exact, False


def full_quota(sparse: Mapping[int, int], shares: Mapping[int, float]) -> dict[int, int]:
    """A row's quota from its ``round_rows_sparse`` form."""
    return {spu: sparse.get(spu, 0) for spu in shares}


def flow_round(rows: Sequence[Row], cluster_group: Mapping[int, str],
               spu_bounds: Mapping[int, tuple[int, int]],
               group_bounds: Mapping[str, tuple[int, int]],
               limits: _Limits) -> dict[str, dict[int, int]] | None:
    """The cheapest rounding within every bound, or None if the flow finds none."""
    net = MinCostFlow()
    source, sink = net.node(), net.node()
    # Among equally cheap roundings, prefer extras that do not rest on a
    # replica the rack spread will move anyway: one unit per such extra, all
    # of them together worth less than one arriving replica.
    risky = any(row.secure is not None for row in rows)
    arrival = 1 + sum(len(row.shares) for row in rows) if risky else 1
    base = {s: 0 for s in spu_bounds}
    result: dict[str, dict[int, int]] = {}
    for row in rows:
        low, _ = limits.of(row)
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
    cells: list[tuple[str, list[int], int]] = []
    shapes: dict[tuple[int, int], tuple] = {}
    for row in rows:
        low, flexible = limits.of(row)
        extras = row.total - sum(low.values())
        if extras <= 0:
            continue
        row_node = net.node()
        net.edge(source, row_node, extras, extras)
        shape, single = _row_shape(shapes, row, low, flexible, room)
        if shape is None:
            return None
        current, secure = row.current, row.secure
        for g, group_lo, group_hi, spus in shape:
            if single:
                group_node = row_node
            else:
                group_node = net.node()
                net.edge(row_node, group_node, max(0, group_lo), group_hi)
            if secure is None:
                costs = [arrival if current.get(spu, 0) <= low[spu] else 0 for spu in spus]
            else:
                costs = [arrival if current.get(spu, 0) <= low[spu] else
                         int(secure.get(spu, 0) <= low[spu]) for spu in spus]
            first = net.unit_edges(group_node, [spu_node[spu] for spu in spus], costs)
            cells.append((row.key, spus, first))
    net.edge(sink, source, 0, sum(r.total for r in rows))
    if not net.solve():
        return None
    flow = net.flow
    for key, spus, first in cells:
        quota = result[key]
        for k, spu in enumerate(spus):
            if flow(first + 2 * k):
                quota[spu] += 1
    return result


def _row_shape(shapes: dict[tuple[int, int], tuple], row: Row, low: Mapping[int, int],
               flexible: Sequence[int], room: Mapping[int, int]) -> tuple[tuple | None, bool]:
    """A row's topic groups in order, as (group, extras it must take, may take, SPUs
    with room that may take one), None when a group must take extras none can; and
    whether the row has one group only (its extras then go straight to the SPUs).
    Worked out once per shares mapping and group map: topics of one shape share them."""
    key = (id(row.shares), id(row.group_of))
    entry = shapes.get(key)
    if entry is not None and entry[0] is row.shares and entry[1] is row.group_of:
        return entry[2:]
    group_of = row.group_of or {}
    members: dict[str, list[int]] = {}
    for spu in flexible:
        members.setdefault(group_of.get(spu, ONE_GROUP), []).append(spu)
    group_lo, group_hi = _group_extra_bounds(row, group_of or {s: ONE_GROUP for s in row.shares}, low)
    shape: tuple | None = tuple(
        (g, group_lo[g], group_hi[g], [s for s in sorted(members[g]) if room[s] > 0])
        for g in sorted(members) if not (group_hi[g] <= 0 and group_lo[g] <= 0))
    if any(g not in members and group_lo[g] > 0 for g in group_lo):
        shape = None
    entry = shapes[key] = (row.shares, row.group_of, shape, len(group_lo) == 1)
    return entry[2:]


def _group_extra_bounds(row: Row, group_of: Mapping[int, str],
                        quota: Mapping[int, int]) -> tuple[dict, dict]:
    return group_extra_bounds(row.shares, group_of, quota, floor_share, ceil_share)
