"""Exact rounding of quotas: every bound at once, fewest moves (min-cost flow)."""
from __future__ import annotations

import itertools
import random

from planner.core.mincost import MinCostFlow
from planner.core.quotas import Row, bounds_of, round_rows
from planner.core.targets import ONE_GROUP, ceil_share, floor_share


def test_min_cost_flow_meets_lower_bounds_at_least_cost():
    net = MinCostFlow()
    s, a, b, t = (net.node() for _ in range(4))
    net.edge(s, a, 0, 3, 1)
    net.edge(s, b, 0, 3, 0)
    cheap = net.edge(b, t, 0, 3, 0)
    forced = net.edge(a, t, 2, 3, 0)
    net.edge(t, s, 4, 4)
    assert net.solve()
    assert (net.flow(forced), net.flow(cheap)) == (2, 2)


def test_min_cost_flow_reports_infeasible_bounds():
    net = MinCostFlow()
    s, t = net.node(), net.node()
    net.edge(s, t, 0, 1)
    net.edge(t, s, 2, 2)
    assert not net.solve()


def cost(rows, quotas):
    return sum(max(0, n - quotas[r.key].get(s, 0)) for r in rows for s, n in r.current.items())


def within(x: float, n: int) -> bool:
    return floor_share(x) <= n <= ceil_share(x)


def random_rows(rng, spus, racks):
    rows = []
    for k in range(rng.randint(1, 3)):
        partitions, rf = rng.randint(1, 5), rng.randint(1, 3)
        total = partitions * rf
        shares = {s: total / len(spus) for s in spus}  # even weights, no cap hit
        if any(v > partitions for v in shares.values()):
            continue
        current = {s: rng.randint(0, 3) for s in spus}
        group_of = {s: racks[s] for s in spus} if rng.random() < 0.5 else None
        rows.append(Row(f"t{k}", total, shares, group_of, current))
    return rows


def brute_force(rows, cluster_group):
    """Cheapest rounding by enumeration (tiny cases only), or None."""
    options = []
    for row in rows:
        spus = sorted(row.shares)
        per_row = []
        for pick in itertools.product(*[range(floor_share(row.shares[s]), ceil_share(row.shares[s]) + 1)
                                        for s in spus]):
            quota = dict(zip(spus, pick))
            if sum(pick) != row.total:
                continue
            groups = {}
            for s in spus:
                g = (row.group_of or {}).get(s, ONE_GROUP)
                groups.setdefault(g, [0, 0.0])
                groups[g][0] += quota[s]
                groups[g][1] += row.shares[s]
            if all(within(x, n) for n, x in groups.values()):
                per_row.append(quota)
        options.append(per_row)
    spu_bounds, group_bounds = bounds_of(rows, cluster_group)
    best = None
    for combo in itertools.product(*options):
        quotas = {r.key: q for r, q in zip(rows, combo)}
        totals = {s: sum(q[s] for q in combo) for s in spu_bounds}
        if any(not lo <= totals[s] <= hi for s, (lo, hi) in spu_bounds.items()):
            continue
        racks = {}
        for s, n in totals.items():
            racks[cluster_group[s]] = racks.get(cluster_group[s], 0) + n
        if any(not lo <= racks[g] <= hi for g, (lo, hi) in group_bounds.items()):
            continue
        c = cost(rows, quotas)
        best = c if best is None else min(best, c)
    return best


def test_rounding_meets_every_bound_and_matches_brute_force_cost():
    rng = random.Random(7)
    checked = 0
    for _ in range(120):
        count = rng.randint(3, 5)
        spus = list(range(count))
        racks = {s: f"r{s % rng.randint(1, 3)}" for s in spus}
        rows = random_rows(rng, spus, racks)
        if not rows:
            continue
        quotas = round_rows(rows, racks)
        spu_bounds, group_bounds = bounds_of(rows, racks)
        totals = {s: sum(q[s] for q in quotas.values()) for s in spus}
        assert all(lo <= totals[s] <= hi for s, (lo, hi) in spu_bounds.items())
        for row in rows:
            assert sum(quotas[row.key].values()) == row.total
            assert all(within(row.shares[s], quotas[row.key][s]) for s in spus)
        optimum = brute_force(rows, racks)
        assert optimum is not None
        assert cost(rows, quotas) == optimum
        checked += 1
    assert checked > 50


def test_rounding_is_deterministic():
    rng = random.Random(3)
    spus = list(range(5))
    racks = {s: f"r{s % 2}" for s in spus}
    rows = random_rows(rng, spus, racks) or random_rows(rng, spus, racks)
    assert round_rows(rows, racks) == round_rows(rows, racks)

