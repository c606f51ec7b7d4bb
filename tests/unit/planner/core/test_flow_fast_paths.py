"""The quick paths of the grid's hot loops find the same flows, quotas, placements and
plans as the straightforward ones: the blocking flow on listed admissible edges against a
plain Dinic that scans whole adjacencies and restarts from the source after every path,
cell edges added in bulk against one by one, offers filtered once per blocked set against
filtering them at every step."""
from __future__ import annotations

import random

import pytest

from planner.core import Cluster, Options, Spu, Topic, plan, standard_grid
from planner.core import chains, leaders, quotas
from planner.core.mincost import MinCostFlow


class PlainFlow(MinCostFlow):
    """Dinic as it reads in a textbook: every edge of a node scanned on each search."""

    def _blocking(self, s: int, t: int, pot: list) -> int:
        n = len(self.adj)
        adj, to, cap, cost = self.adj, self.to, self.cap, self.cost
        total = 0
        while True:
            level = [-1] * n
            level[s] = 0
            queue = [s]
            for u in queue:
                if level[t] >= 0 and level[u] >= level[t]:
                    break
                for e in adj[u]:
                    v = to[e]
                    if cap[e] > 0 and level[v] < 0 and cost[e] + pot[u] == pot[v]:
                        level[v] = level[u] + 1
                        queue.append(v)
            if level[t] < 0:
                return total
            it, stack, u = [0] * n, [], s
            while True:
                if u == t:
                    f = min(cap[e] for e in stack)
                    for e in stack:
                        cap[e] -= f
                        cap[e ^ 1] += f
                    total += f
                    stack.clear()
                    u = s
                    continue
                edges = adj[u]
                while it[u] < len(edges):
                    e = edges[it[u]]
                    v = to[e]
                    if cap[e] > 0 and level[v] == level[u] + 1 and cost[e] + pot[u] == pot[v]:
                        break
                    it[u] += 1
                if it[u] < len(edges):
                    stack.append(edges[it[u]])
                    u = to[edges[it[u]]]
                    continue
                if u == s:
                    break
                level[u] = -1
                e = stack.pop()
                u = to[e ^ 1]
                it[u] += 1

    def unit_edges(self, u: int, heads: list[int], costs: list[int]) -> int:
        first = len(self.to)
        for v, c in zip(heads, costs):
            self.edge(u, v, 0, 1, c)
        return first


def random_network(kind: type[MinCostFlow], seed: int) -> MinCostFlow:
    rng = random.Random(seed)
    net = kind()
    nodes = [net.node() for _ in range(rng.randint(4, 14))]
    for _ in range(rng.randint(6, 40)):
        u, v = rng.sample(nodes, 2)
        low = rng.choice([0, 0, 0, 1])
        net.edge(u, v, low, low + rng.randint(0, 4), rng.randint(0, 3))
    heads = rng.sample(nodes[1:], min(5, len(nodes) - 1))
    net.unit_edges(nodes[0], heads, [rng.randint(0, 2) for _ in heads])
    return net


def test_random_networks_get_the_same_flow_on_every_edge():
    for seed in range(300):
        fast, plain = random_network(MinCostFlow, seed), random_network(PlainFlow, seed)
        assert fast.solve() == plain.solve()
        assert fast.cap == plain.cap and fast.to == plain.to and fast.adj == plain.adj


def small_cluster(seed: int) -> Cluster:
    rng = random.Random(seed)
    spus = tuple(Spu(i, f"r{i % 4}") for i in range(12))
    topics = tuple(Topic(f"t{k}", tuple(tuple(rng.sample(range(12), 3)) for _ in range(
        rng.randint(5, 30)))) for k in range(6))
    return Cluster(spus, topics)


class PlainOffers(chains._OpenOffers):
    def past(self, blocked: set) -> list[tuple]:
        return [(spu, other, fresh, target) for group, spu, other, fresh, target in self.offers
                if group not in blocked and spu not in blocked]


@pytest.mark.parametrize("seed", range(2))
def test_a_small_clusters_grid_plans_the_same_on_the_quick_and_the_plain_paths(seed,
                                                                               monkeypatch):
    cluster = small_cluster(seed)
    scenarios = standard_grid(cluster, up_to=1)
    quick = [plan(cluster, s, Options()) for s in scenarios]
    monkeypatch.setattr(quotas, "MinCostFlow", PlainFlow)
    monkeypatch.setattr(leaders, "MinCostFlow", PlainFlow)
    monkeypatch.setattr(chains, "_OpenOffers", PlainOffers)
    plain = [plan(cluster, s, Options()) for s in scenarios]
    assert [p.metrics for p in quick] == [p.metrics for p in plain]
    assert [p.target for p in quick] == [p.target for p in plain]
