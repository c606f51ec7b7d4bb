"""The quota shortcut for large clusters is used only when provably optimal."""
from __future__ import annotations

import random

from planner.core import Cluster, Options, Scenario, Spu, Topic, prepare
from planner.core.planner import current_facts
from planner.core.quotas import Row, _Limits, bounds_of, flow_round, round_rows
from planner.core.quick_quotas import quick_round
from planner.core.targets import ceil_share, floor_share


def rows_of(cluster: Cluster, scenario: Scenario) -> tuple[list[Row], dict]:
    prep = prepare(cluster, scenario, Options())
    facts = current_facts(cluster)
    rows = [Row(s.topic, s.total, s.shares, s.group_of, facts.counts[s.topic])
            for s in prep.shares]
    return rows, prep.cluster_group


def cost(rows, quotas) -> int:
    return sum(max(0, quotas[r.key][s] - max(r.current.get(s, 0), floor_share(r.shares[s])))
               for r in rows for s in r.shares)


def random_cluster(rng: random.Random) -> tuple[Cluster, Scenario]:
    racks = rng.choice([2, 3, 4])
    count = rng.randint(6, 14)
    spus = tuple(Spu(i, f"r{i % racks}") for i in range(count))
    topics = []
    for k in range(rng.randint(2, 6)):
        start, rf = rng.randrange(count), rng.choice([2, 3])
        topics.append(Topic(f"t{k}", tuple(tuple((start + rf * p + j) % count for j in range(rf))
                                           for p in range(rng.randint(3, 12)))))
    cluster = Cluster(spus, tuple(topics))
    scenario = rng.choice([Scenario(), Scenario("add", add_spus=(Spu(count, "r0"),)),
                           Scenario("add2", add_spus=(Spu(count, "r0"), Spu(count + 1, "r1")))])
    return cluster, scenario


def test_a_shortcut_rounding_meets_every_bound_at_the_flows_cost():
    rng = random.Random(14)
    used = 0
    for _ in range(300):
        rows, groups = rows_of(*random_cluster(rng))
        spu_bounds, rack_bounds = bounds_of(rows, groups)
        quick = quick_round(rows, groups, spu_bounds, rack_bounds, _Limits(),
                            floor_share, ceil_share)
        exact = flow_round(rows, groups, spu_bounds, rack_bounds, _Limits())
        if quick is None:
            continue
        used += 1
        assert cost(rows, quick) == cost(rows, exact)
        for row in rows:
            assert sum(quick[row.key].values()) == row.total
            for spu, share in row.shares.items():
                assert floor_share(share) <= quick[row.key][spu] <= ceil_share(share)
        for spu, (lo, hi) in spu_bounds.items():
            assert lo <= sum(quick[r.key].get(spu, 0) for r in rows) <= hi
        for row in rows:
            racks: dict = {}
            for spu, share in row.shares.items():
                rack = groups[spu]
                low, got = racks.get(rack, (0.0, 0))
                racks[rack] = (low + share, got + quick[row.key][spu])
            for share, got in racks.values():
                assert floor_share(share) <= got <= ceil_share(share)
    assert used >= 50  # not a dead branch: 74 of these 300 small layouts take it


def test_round_rows_gives_the_same_cost_with_and_without_the_shortcut():
    rng = random.Random(41)
    for _ in range(100):
        rows, groups = rows_of(*random_cluster(rng))
        assert cost(rows, round_rows(rows, groups, quick_cells=0)) == \
            cost(rows, round_rows(rows, groups, quick_cells=10**9))


def test_sparse_quotas_rebuild_the_full_quotas_in_the_same_order():
    from planner.core.quotas import full_quota, round_rows_sparse

    rng = random.Random(15)
    sparse_seen = full_seen = 0
    for _ in range(100):
        rows, groups = rows_of(*random_cluster(rng))
        full = round_rows(rows, groups, quick_cells=0)
        quotas, sparse = round_rows_sparse(rows, groups, quick_cells=0)
        for row in rows:
            rebuilt = full_quota(quotas[row.key], row.shares) if sparse else quotas[row.key]
            assert list(rebuilt.items()) == list(full[row.key].items())
            if sparse:
                assert 0 not in quotas[row.key].values()
        sparse_seen += sparse
        full_seen += not sparse
    assert sparse_seen and full_seen
