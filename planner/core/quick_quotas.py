"""A certified shortcut for the quota rounding of large clusters.

The exact rounding (``quotas.flow_round``) is a min-cost flow with one edge
per (topic, SPU) cell: millions on a large cluster, and most of a large plan's
time. Usually the answer is plain: keep every extra that costs nothing (the
SPU already holds more than its rounded-down share), then hand extras to the
SPUs below their cluster-wide floor by swapping within one topic and one rack
(so every topic and topic-rack sum stays put), always from the fullest SPU,
and from SPUs above their ceiling to the emptiest one below its own.

The result is used only when it meets every bound and its cost (arriving
replicas) equals a lower bound on any rounding's cost: SPU s can take at most
``F_s`` free extras (cells where it holds more than the floor), so at least
``max(0, lo_s - base_s - F_s)`` of its extras are paid, and the extras that
no SPU can take for free are paid too. A rounding at that bound is optimal,
so the plan moves exactly as few replicas as with the flow; otherwise the
caller runs the flow. Rows whose rack spread breaks the rule (``secure``) have
tie-break costs the shortcut does not model: it declines them.
"""
from __future__ import annotations

from collections import Counter
from itertools import chain
from typing import Container, Mapping, Sequence

ONE = "*"


def group_extra_bounds(shares: Mapping[int, float], group_of: Mapping[int, str],
                       quota: Mapping[int, int], floor, ceil) -> tuple[dict, dict]:
    """Per group: extras above the rounded-down quotas it must and may take."""
    share: dict[str, float] = {}
    base: dict[str, int] = {}
    for spu, q in shares.items():
        group = group_of[spu]
        share[group] = share.get(group, 0.0) + q
        base[group] = base.get(group, 0) + quota[spu]
    low = {g: floor(v) - base[g] for g, v in share.items()}
    high = {g: ceil(v) - base[g] for g, v in share.items()}
    return low, high


class _Shape:
    """Rows sharing one shares mapping and one rack map (topics of one shape)
    share their rack bounds and their SPUs with room by rack: worked out once,
    not once per topic of thousands."""

    def __init__(self, row, low: Mapping[int, int], flexible: Sequence[int],
                 room: Mapping[int, int], floor, ceil) -> None:
        self.shares, self.groups = row.shares, row.group_of
        self.group_of = row.group_of or {s: ONE for s in row.shares}
        self.glo, self.ghi = group_extra_bounds(row.shares, self.group_of, low, floor, ceil)
        by_group: dict[str, list[int]] = {}
        for spu in flexible:
            if room[spu] > 0:
                by_group.setdefault(self.group_of[spu], []).append(spu)
        self.by_group = list(by_group.items())
        self.members = by_group
        self.group_order = sorted(self.ghi)
        self.flexible = frozenset(flexible)
        self.low_sum = sum(low.values())
        self.low_zero = not any(low.values())


class _Rounding:
    def __init__(self, spu_bounds: Mapping[int, tuple[int, int]], base: Mapping[int, int]) -> None:
        self.lo = {s: b[0] for s, b in spu_bounds.items()}
        self.hi = {s: b[1] for s, b in spu_bounds.items()}
        self.load = dict(base)
        self.room = {s: self.hi[s] - base[s] for s in base}
        self.free_cells: Counter[int] = Counter()
        self.cost = 0
        # Per row: group -> SPUs given an extra; the row's SPU -> group; paid cells.
        self.chosen: list[dict[str, list[int]]] = []
        self.group_in: list[Mapping[int, str]] = []
        # Per row, its free cells: any container of SPU ids (see ``seed``).
        self.free_in: list[Container[int]] = []
        self.flexible_in: list[frozenset[int]] = []
        self.shape_in: list[_Shape] = []
        self.bounds_in: list[tuple[dict, dict]] = []
        self._shapes: dict[tuple[int, int], _Shape] = {}

    def need(self, spu: int) -> int:
        return self.lo[spu] - self.load[spu]

    def shape(self, row, low: Mapping[int, int], flexible: Sequence[int], floor, ceil) -> _Shape:
        """What rows of one shares mapping (and rack map) have in common."""
        key = (id(row.shares), id(row.group_of))
        shape = self._shapes.get(key)
        if shape is None or shape.shares is not row.shares or shape.groups is not row.group_of:
            shape = self._shapes[key] = _Shape(row, low, flexible, self.room, floor, ceil)
        return shape

    def seed(self, row, low: Mapping[int, int], flexible: Sequence[int], floor, ceil) -> bool:
        """Give the row its extras: free cells first, paid ones where it must."""
        shape = self.shape(row, low, flexible, floor, ceil)
        group_of, glo, ghi = shape.group_of, shape.glo, shape.ghi
        free: dict[str, list[int]] = {}
        current = row.current
        # With every rounded-down share 0, a cell is free exactly where the
        # topic has a replica: a key test, the usual case on large clusters.
        by_key = shape.low_zero and (not current or min(current.values()) > 0)
        held = current.get
        # Per rack, SPUs (with room, in ``flexible`` order) split into free and paid cells.
        for group, members in shape.by_group:
            if by_key:
                cells = [s for s in members if s in current]
            else:
                cells = [s for s in members if held(s, 0) > low[s]]
            if cells:
                free[group] = cells
                self.free_cells.update(cells)
        # Paid cells are listed only for racks that need them (most rows need none).
        paid: dict[str, list[int]] = {}

        def paid_in(group: str) -> list[int]:
            if group not in paid:
                paid[group] = [s for s in shape.members.get(group, ()) if held(s, 0) <= low[s]]
            return paid[group]

        chosen = {g: members[:max(0, ghi.get(g, 0))] for g, members in free.items()}
        extras = row.total - shape.low_sum
        missing = extras - sum(len(c) for c in chosen.values())
        if missing < 0:
            return False
        for must in (True, False):
            for g in shape.group_order:
                want = (glo[g] if must else ghi[g]) - len(chosen.get(g, ()))
                while want > 0 and missing > 0 and paid_in(g):
                    spu = max(paid[g], key=lambda s: (self.need(s), -s))
                    paid[g].remove(spu)
                    chosen.setdefault(g, []).append(spu)
                    self.cost += 1
                    want -= 1
                    missing -= 1
        if missing or any(len(chosen.get(g, ())) < lo for g, lo in glo.items()):
            return False
        for members in chosen.values():
            for spu in members:
                self.load[spu] += 1
        self.chosen.append(chosen)
        self.group_in.append(group_of)
        self.flexible_in.append(shape.flexible)
        self.shape_in.append(shape)
        cells = sum(len(members) for members in free.values())
        # Free cells hold replicas, so when there are as many as the topic's
        # SPUs they are those SPUs: the counts stand in for a set of their own
        # (thousands of rows times thousands of SPUs).
        self.free_in.append(current if cells == len(current) else
                            {s for members in free.values() for s in members})
        self.bounds_in.append((glo, ghi))
        return True

    def balance_racks(self, cluster_group: Mapping[int, str],
                      rack_bounds: Mapping[str, tuple[int, int]],
                      flexibles: Sequence[Sequence[int]]) -> None:
        """Move extras, within a topic whose rack sums allow it, from racks
        above their cluster-wide ceiling to racks below theirs."""
        total: dict[str, int] = {}
        for spu, n in self.load.items():
            total[cluster_group[spu]] = total.get(cluster_group[spu], 0) + n
        for rack in sorted(rack_bounds):
            for r in range(len(self.chosen)):
                if total.get(rack, 0) <= rack_bounds[rack][1]:
                    break
                taker_rack = self._rack_hand_over(r, rack, flexibles[r], total, rack_bounds)
                if taker_rack is not None:
                    total[rack] -= 1
                    total[taker_rack] += 1

    def _rack_hand_over(self, r: int, rack: str, flexible: Sequence[int],
                        total: Mapping[str, int],
                        rack_bounds: Mapping[str, tuple[int, int]]) -> str | None:
        chosen, (glo, ghi), group_in = self.chosen[r], self.bounds_in[r], self.group_in[r]
        members = chosen.get(rack)
        if not members or len(members) <= glo.get(rack, 0):
            return None
        free, load = self.free_in[r], self.load
        # SPU ceilings are met later (``lower_ceilings``); a paid taker must be
        # below its floor, so the arrival is one ``raise_floors`` would pay anyway.
        # Racks that may take one more first (a few dozen), then their SPUs
        # with room; ``min`` below does not depend on the order.
        open_racks = [g for g, spus in self.shape_in[r].members.items()
                      if g != rack and len(chosen.get(g, ())) < ghi.get(g, 0)
                      and total.get(g, 0) < rack_bounds[g][1]]
        takers = [s for g in open_racks for s in self.shape_in[r].members[g]
                  if (s in free or self.need(s) > 0) and s not in chosen.get(g, ())]
        if not takers:
            return None
        taker = min(takers, key=lambda s: (s not in free, load[s], s))
        giver = max(members, key=lambda s: (s not in free, load[s], s))
        members.remove(giver)
        chosen.setdefault(group_in[taker], []).append(taker)
        load[giver] -= 1
        load[taker] += 1
        self.cost += (taker not in free) - (giver not in free)
        return group_in[taker]

    def raise_floors(self, flexible_sets: Sequence[frozenset[int]]) -> None:
        """Swap extras to SPUs below their floor from the fullest SPU of the
        same topic and rack; free cells first."""
        load, lo, free_in = self.load, self.lo, self.free_in
        for spu in sorted(s for s in load if self.need(s) > 0):
            # ``free_cells`` counts the rows where the SPU's cell is free: with
            # none (a new SPU) the first pass would find nothing.
            for want_free in (True, False) if self.free_cells[spu] else (False,):
                for r, chosen in enumerate(self.chosen):
                    if load[spu] >= lo[spu]:
                        break
                    if spu in flexible_sets[r] and (spu in free_in[r]) == want_free:
                        self._swap_in(r, spu, chosen)

    def lower_ceilings(self, flexibles: Sequence[Sequence[int]]) -> None:
        """Swap extras from SPUs above their ceiling to the emptiest SPU of
        the same topic and rack still below its own; free cells first."""
        for spu in sorted(s for s in self.load if self.load[s] > self.hi[s]):
            for want_free in (True, False):
                for r, chosen in enumerate(self.chosen):
                    if self.load[spu] <= self.hi[spu]:
                        break
                    group = self.group_in[r].get(spu)
                    members = chosen.get(group)
                    if members and spu in members:
                        self._swap_out(r, spu, members, group, flexibles[r], want_free)

    def _swap_out(self, r: int, spu: int, members: list[int], group: str,
                  flexible: Sequence[int], want_free: bool) -> None:
        """Hand ``spu``'s extra in row ``r`` to a taker of its rack or, when
        the row's rack sums allow, of another rack."""
        group_in, free, load, hi = self.group_in[r], self.free_in[r], self.load, self.hi
        chosen, (glo, ghi) = self.chosen[r], self.bounds_in[r]
        may_leave = len(members) > glo.get(group, 0)
        takers = [s for s in flexible if load[s] < hi[s] and self.room[s] > 0
                  and (s in free) == want_free and s not in chosen.get(group_in[s], ())
                  and (group_in[s] == group or
                       (may_leave and len(chosen.get(group_in[s], ())) < ghi.get(group_in[s], 0)))]
        if not takers:
            return
        taker = min(takers, key=lambda s: (group_in[s] != group, load[s], s))
        members.remove(spu)
        chosen.setdefault(group_in[taker], []).append(taker)
        load[spu] -= 1
        load[taker] += 1
        self.cost += (taker not in free) - (spu not in free)

    def _swap_in(self, r: int, spu: int, chosen: dict[str, list[int]]) -> None:
        members = chosen.get(self.group_in[r][spu])
        if not members or spu in members:
            return
        giver = max(members, key=self.load.__getitem__)
        if self.load[giver] <= self.lo[giver]:
            return
        members[members.index(giver)] = spu
        self.load[giver] -= 1
        self.load[spu] += 1
        self.cost += (spu not in self.free_in[r]) - (giver not in self.free_in[r])


def quick_round(rows: Sequence, cluster_group: Mapping[int, str],
                spu_bounds: Mapping[int, tuple[int, int]],
                group_bounds: Mapping[str, tuple[int, int]], limits, floor, ceil,
                sparse: bool = False) -> dict[str, dict[int, int]] | None:
    """The certified-optimal rounding, or None when the shortcut cannot tell.
    ``sparse``: leave out the zero quotas (thousands of topics over thousands
    of SPUs are mostly zeros; a row's full quota is its shares' SPUs in
    order, each ``sparse.get(spu, 0)``)."""
    if any(row.secure is not None for row in rows):
        return None
    lows, flexibles = zip(*(limits.of(row) for row in rows)) if rows else ((), ())
    base = dict.fromkeys(spu_bounds, 0)
    for low, times in _repeats(lows):
        for spu, n in low.items():
            base[spu] += n * times
    state = _Rounding(spu_bounds, base)
    for row, low, flexible in zip(rows, lows, flexibles):
        if not state.seed(row, low, flexible, floor, ceil):
            return None
    state.balance_racks(cluster_group, group_bounds, flexibles)
    state.raise_floors(state.flexible_in)
    state.lower_ceilings(flexibles)
    if not _within(state, cluster_group, group_bounds) or state.cost != _lower_bound(state, rows, lows):
        return None
    result = {}
    for row, low, chosen in zip(rows, lows, state.chosen):
        if sparse:
            result[row.key] = _sparse_quota(low, chosen)
            continue
        quota = dict(low)
        if not any(low.values()):
            # Each SPU has at most one extra in a row: with every share rounded
            # down to 0 its quota is 1, set in C.
            quota.update(dict.fromkeys(chain.from_iterable(chosen.values()), 1))
        else:
            for members in chosen.values():
                for spu in members:
                    quota[spu] += 1
        result[row.key] = quota
    return result


def _sparse_quota(low: Mapping[int, int], chosen: Mapping[str, list[int]]) -> dict[int, int]:
    quota = {spu: n for spu, n in low.items() if n}
    for members in chosen.values():
        for spu in members:
            quota[spu] = quota.get(spu, 0) + 1
    return quota


def _within(state: _Rounding, cluster_group: Mapping[int, str],
            group_bounds: Mapping[str, tuple[int, int]]) -> bool:
    if any(not state.lo[s] <= n <= state.hi[s] for s, n in state.load.items()):
        return False
    racks: dict[str, int] = {}
    for spu, n in state.load.items():
        racks[cluster_group[spu]] = racks.get(cluster_group[spu], 0) + n
    return all(lo <= racks.get(g, 0) <= hi for g, (lo, hi) in group_bounds.items())


def _lower_bound(state: _Rounding, rows: Sequence, lows: Sequence[Mapping[int, int]]) -> int:
    base = {s: state.hi[s] - state.room[s] for s in state.room}
    short = sum(max(0, state.lo[s] - base[s] - state.free_cells[s]) for s in base)
    extras = sum(row.total for row in rows) - sum(sum(low.values()) * times
                                                  for low, times in _repeats(lows))
    free = sum(min(max(0, state.room[s]), state.free_cells[s]) for s in base)
    return max(short, extras - free, 0)


def _repeats(items: Sequence[Mapping]) -> list[tuple[Mapping, int]]:
    """Each distinct object of ``items`` (by identity) with how often it occurs."""
    seen: dict[int, list] = {}
    for item in items:
        seen.setdefault(id(item), [item, 0])[1] += 1
    return [(item, times) for item, times in seen.values()]
