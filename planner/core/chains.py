"""Filling a partition through a chain of hand-overs (``rebalance``'s refill).

When no SPU below quota fits a partition that misses a replica, the partition
takes SPU x from partition p1, p1 takes y from p2, ... until a partition
takes an SPU below quota: an augmenting path of the placement flow, where
every partition on the path swaps one replica and keeps its length.

The quick search labels partitions and stops after a few of them; it finds
almost every chain. What a partition may take, though, depends on the
replica it gives up: under the rack spread, giving up a replica of rack g
frees a place in g. A partition labelled through one rack is not tried
through another, so a chain can be missed (RF 4 over racks of 6, 3 and 1
SPUs: a partition reached by handing on its rack-b replica cannot take the
rack-a SPU below quota that handing on a rack-a replica would let in). When
the quick search finds nothing, the thorough one labels (partition, rack
given up) pairs with no limit, so it finds a chain whenever one exists that
passes each partition once; only then does the refill give up on the quota.

Every search charges the topic's operation budget (``Work.allowance``): the
offers it lists and scans, and a fixed weight per partition it labels. Past the
budget it stops and the refill searches no more (small topics with very unequal
racks and more replicas than racks once spent tens of seconds here).
"""
from __future__ import annotations

from typing import Hashable, Mapping

from planner.core.refill_state import Deficits, Work

# A partition and the rack (anti-affinity key) of the replica it hands on; the
# rack is None for the partition the chain fills, and in the quick search.
State = tuple[int, Hashable]
# State -> (the state it handed its replica to, that replica's SPU).
Came = Mapping[State, tuple[State, int]]
STATE_OPERATIONS = 40


def augment(work: Work, start: int, deficit: Deficits,
            max_cost: int | None = None, limit: int | None = 24) -> bool:
    """Fill ``start`` through the cheapest chain found within ``limit``
    labelled partitions, or with ``limit`` None through the thorough search
    (see the module text).

    Label-correcting search on the number of new copies the chain adds, so a
    chain that hands back a dropped replica is preferred over a new copy;
    each search level is finished before the cheapest complete chain is used.
    """
    holders: dict[int, list[int]] = {}
    for pid, reps in enumerate(work.kept):
        for spu in reps:
            holders.setdefault(spu, []).append(pid)
    # Constant during one search: every replica that can be handed over (SPUs
    # in quota order, as ties go to the first found) and the SPUs below quota.
    key, original = work.key, work.original
    thorough = limit is None
    # Each offer with the state it labels made once, not once per search step.
    offers = [(key[spu], spu, other, spu not in original[other],
               (other, key[spu] if thorough else None))
              for spu in work.quota if spu not in deficit and spu in holders
              for other in holders[spu]]
    wanted = list(deficit)
    first: State = (start, None)
    unreached = len(work.kept) * 2 + 2
    cost: dict[State, int] = {first: -unreached}  # ``start`` is never relabelled
    came: dict[State, tuple[State, int]] = {}
    leaving: dict[State, int | None] = {first: None}
    best = _finish(work, first, None, 0, wanted, None)
    level = [first]
    budget = len(offers) * len(work.kept) + 1 if thorough else limit
    open_offers = _OpenOffers(offers)
    known = cost.get
    # The topic's operation budget (``Work.allowance``): offers listed and scanned.
    work.spent += len(offers)
    while level and budget > 0 and (best is None or best[0] > (max_cost or 0)):
        following = []
        for state in level[:budget]:
            budget -= 1
            if work.spent > work.allowance:
                work.stopped = True
                return False
            pid = state[0]
            base, mine = (0 if state is first else cost[state]), original[pid]
            open_ = open_offers.past(work.blocked(pid, leaving[state]))
            # A state's own checks (its rack blocks, the chain's end) weigh as much
            # as some dozens of offers scanned.
            work.spent += len(open_) + STATE_OPERATIONS
            for spu, other, fresh, target in open_:
                total = base + (spu not in mine) - fresh
                if total >= known(target, unreached) or _on_path(came, state, other):
                    continue
                cost[target], came[target], leaving[target] = total, (state, spu), spu
                following.append(target)
                best = _finish(work, target, spu, total, wanted, best)
        level = following
    if best is None or (max_cost is not None and best[0] > max_cost):
        return False
    if not _chain_holds(work, best[1], best[2], came, first):
        return False
    _apply_chain(work, best[1], best[2], came, first)
    deficit.charge(best[2])
    return True


class _OpenOffers:
    """The offers a partition may take, in offer order, per set of blocked racks and
    SPUs: partitions of a search share few such sets, and most offers pass."""

    def __init__(self, offers: list[tuple]) -> None:
        self.offers = offers
        self.seen: dict[frozenset, list[tuple]] = {}

    def past(self, blocked: set) -> list[tuple]:
        key = frozenset(blocked)
        open_ = self.seen.get(key)
        if open_ is None:
            open_ = self.seen[key] = [(spu, other, fresh, target)
                                      for group, spu, other, fresh, target in self.offers
                                      if group not in blocked and spu not in blocked]
        return open_


def _finish(work: Work, state: State, leaving: int | None, cost: int, wanted: list[int],
            best: tuple[int, State, int] | None) -> tuple[int, State, int] | None:
    """The cheaper of ``best`` and ending the chain at ``state`` with an SPU below quota."""
    pid = state[0]
    blocked = work.blocked(pid, leaving)
    key, mine = work.key, work.original[pid]
    for spu in wanted:
        if key[spu] not in blocked and spu not in blocked:
            total = cost + (spu not in mine)
            if best is None or total < best[0]:
                best = (total, state, spu)
    return best


def _on_path(came: Came, state: State, other: int) -> bool:
    while state in came:
        if state[0] == other:
            return True
        state = came[state][0]
    return state[0] == other


def _chain_holds(work: Work, last: State, spu: int, came: Came, first: State) -> bool:
    """Every hand-over of the chain is still allowed: a state relabelled
    after its search step may hand over another SPU than that step assumed."""
    state = last
    while state != first:
        receiver, handed = came[state]
        blocked = work.blocked(state[0], handed)
        if spu in blocked or work.key[spu] in blocked:
            return False
        state, spu = receiver, handed
    blocked = work.blocked(first[0], None)
    return spu not in blocked and work.key[spu] not in blocked


def _apply_chain(work: Work, last: State, spu: int, came: Came, first: State) -> None:
    work.have[spu] += 1
    state = last
    while state != first:
        receiver, handed = came[state]
        slot = work.kept[state[0]].index(handed)
        work.kept[state[0]][slot] = spu
        state, spu = receiver, handed
    work.kept[first[0]].append(spu)
