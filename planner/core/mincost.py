"""A small min-cost flow with lower bounds, in plain Python (no dependencies).

Edges carry ``[low, high]`` bounds and a non-negative integer cost. Lower
bounds are turned into node supplies and demands served from an auxiliary
source and sink (the usual circulation reduction); the flow is then found by
the primal-dual method: a Dijkstra pass on reduced costs fixes potentials,
then a blocking flow (Dinic) on the zero-reduced-cost edges pushes as much as
the shortest paths carry. Costs here are small (0 or 1), so there are few
phases however many units flow.

Everything is deterministic: nodes and edges are visited in creation order.
"""
from __future__ import annotations

from heapq import heappop, heappush

INF = float("inf")


class MinCostFlow:
    def __init__(self) -> None:
        self.adj: list[list[int]] = []
        self.to: list[int] = []
        self.cap: list[int] = []
        self.cost: list[int] = []
        self.low: list[int] = []
        self.balance: list[int] = []

    def node(self) -> int:
        self.adj.append([])
        self.balance.append(0)
        return len(self.adj) - 1

    def edge(self, u: int, v: int, low: int, high: int, cost: int = 0) -> int:
        """Add u -> v with flow in [low, high]; returns the edge id."""
        if high < low:
            raise ValueError("edge bounds are empty")
        e = len(self.to)
        self.to += (v, u)
        self.cap += (high - low, 0)
        self.cost += (cost, -cost)
        self.low.append(low)
        self.adj[u].append(e)
        self.adj[v].append(e + 1)
        self.balance[v] += low
        self.balance[u] -= low
        return e

    def unit_edges(self, u: int, heads: list[int], costs: list[int]) -> int:
        """``edge(u, v, 0, 1, c)`` for each v, c of ``heads``, ``costs`` in turn;
        returns the first edge id (the k-th is ``first + 2 * k``)."""
        first = len(self.to)
        k = len(heads)
        pairs = [0] * (2 * k)
        pairs[0::2] = heads
        pairs[1::2] = [u] * k
        self.to += pairs
        self.cap += [1, 0] * k
        pairs[0::2] = costs
        pairs[1::2] = [-c for c in costs]
        self.cost += pairs
        self.low += [0] * k
        self.adj[u].extend(range(first, first + 2 * k, 2))
        adj = self.adj
        for e, v in zip(range(first + 1, first + 2 * k, 2), heads):
            adj[v].append(e)
        return first

    def flow(self, e: int) -> int:
        return self.low[e >> 1] + self.cap[e ^ 1]

    def solve(self) -> bool:
        """Find a cheapest flow meeting every bound; False when none exists."""
        source, sink = self.node(), self.node()
        required = 0
        for v in range(len(self.balance) - 2):
            b = self.balance[v]
            if b > 0:
                self.edge(source, v, 0, b)
                required += b
            elif b < 0:
                self.edge(v, sink, 0, -b)
        return self._primal_dual(source, sink, required) == required

    def _primal_dual(self, s: int, t: int, required: int) -> int:
        n = len(self.adj)
        adj, to, cap, cost = self.adj, self.to, self.cap, self.cost
        pot = [0] * n
        pushed = 0
        while pushed < required:
            # Dijkstra on reduced costs, stopped once the sink is settled.
            dist = [INF] * n
            done = [False] * n
            dist[s] = 0
            heap = [(0, s)]
            reach = INF
            while heap:
                d, u = heappop(heap)
                if done[u]:
                    continue
                done[u] = True
                if u == t:
                    reach = d
                    break
                pu = pot[u] + d
                for e in adj[u]:
                    if cap[e] > 0:
                        v = to[e]
                        if not done[v]:
                            nd = cost[e] + pu - pot[v]
                            if nd < dist[v]:
                                dist[v] = nd
                                heappush(heap, (nd, v))
            if reach == INF:
                break
            for v in range(n):
                pot[v] += dist[v] if done[v] else reach
            pushed += self._blocking(s, t, pot)
        return pushed

    def _blocking(self, s: int, t: int, pot: list) -> int:
        """Dinic on the edges of zero reduced cost."""
        total = 0
        # Each node's edges of zero reduced cost: the potentials stay put for the
        # whole blocking flow, so they are listed once, at a node's first visit.
        tight: dict[int, list[int]] = {}
        while True:
            level, admissible = self._levels(s, t, pot, tight)
            if level[t] < 0:
                return total
            total += self._push(s, t, level, admissible)

    def _levels(self, s: int, t: int, pot: list, tight: dict[int, list[int]]
                ) -> tuple[list[int], dict[int, list[int]]]:
        """BFS levels on the edges of zero reduced cost, as far as ``t``'s level, and
        each expanded node's edges to the next level (in adjacency order). Within one
        blocking flow an edge only ever leaves that list (its capacity runs out or its
        head turns out to be a dead end), so the search scans those lists instead of
        whole adjacencies: the same edges in the same order, far fewer of them."""
        n = len(self.adj)
        adj, to, cap, cost = self.adj, self.to, self.cap, self.cost
        level = [-1] * n
        level[s] = 0
        queue = [s]
        admissible: dict[int, list[int]] = {}
        for u in queue:
            if level[t] >= 0 and level[u] >= level[t]:
                break  # deeper nodes lie on no shortest path to t
            lu = level[u] + 1
            mine = admissible[u] = []
            edges = tight.get(u)
            if edges is None:
                pu = pot[u]
                edges = tight[u] = [e for e in adj[u] if cost[e] + pu == pot[to[e]]]
            for e in edges:
                if cap[e] > 0:
                    v = to[e]
                    if level[v] < 0:
                        level[v] = lu
                        queue.append(v)
                        mine.append(e)
                    elif level[v] == lu:
                        mine.append(e)
        return level, admissible

    def _push(self, s: int, t: int, level: list[int], admissible: dict[int, list[int]]) -> int:
        """One blocking flow along ``admissible`` edges (see ``_levels``)."""
        to, cap = self.to, self.cap
        none: list[int] = []
        it = dict.fromkeys(admissible, 0)
        total = 0
        stack: list[int] = []
        u = s
        while True:
            if u == t:
                f = min(cap[e] for e in stack)
                first = -1
                for k, e in enumerate(stack):
                    cap[e] -= f
                    cap[e ^ 1] += f
                    if first < 0 and cap[e] == 0:
                        first = k
                total += f
                # Back to the tail of the first saturated edge: the edges before it
                # still carry flow, so a search from ``s`` would walk them again.
                del stack[first:]
                u = to[stack[-1]] if stack else s
                continue
            edges = admissible.get(u, none)
            i = it.get(u, 0)
            lu = level[u] + 1
            while i < len(edges):
                e = edges[i]
                if cap[e] > 0 and level[to[e]] == lu:
                    break
                i += 1
            if edges is not none:
                it[u] = i
            if i < len(edges):
                e = edges[i]
                stack.append(e)
                u = to[e]
                continue
            if u == s:
                return total
            level[u] = -1
            e = stack.pop()
            u = to[e ^ 1]
            it[u] += 1
