"""Per-topic replica placement: reach the SPU quotas moving the fewest replicas.

Replicas stay where they are unless they must go: their SPU is removed, the
partition holds two replicas in one rack under anti-affinity (with fewer racks
than replicas: more than its share in one rack, see ``spread``), the partition
has more replicas than its new replication factor, or their SPU holds more
than its quota. Freed slots are then filled from the SPUs below quota. With
quotas that sum to the topic's replicas this moves exactly the count-level
minimum, except where a placement conflict forces a detour.

The hand-over search (``chains``) spends at most an operation budget per topic
(``search_allowance``; a count, so a plan repeats exactly). Where the greedy
placement copies more than the count-level bound, misses a quota or stopped at
the budget, the exact flow of ``placement_flow`` places the topic when it is
affordable; otherwise the placement says it stopped early (``Placement``).
"""
from __future__ import annotations

from itertools import chain, compress
from operator import not_

from planner.core.chains import augment
from planner.core import placement_flow
from planner.core.placement_flow import affordable, copies, count_bound, exact_placement
from planner.core.refill_state import (Deficits, TopicTask, Work, search_allowance,
                                       task_rule)
from planner.core.spread import misplaced

# Re-exported: the planner and the Spark shell take the task and its rule from here.
__all__ = ["Placement", "TopicTask", "assign_topic", "search_allowance", "task_rule"]


class Placement(tuple):
    """A topic's replica sets, saying whether its search stopped at the budget with
    a placement no better than greedy (``stopped_early``): the plan reports it."""

    stopped_early = False



def assign_topic(task: TopicTask) -> Placement:
    """Replica sets per partition: survivors in their old order, newcomers after."""
    work = Work(task)
    _release_over_replicated(work)
    if work.groups is not None:
        _drop_rack_duplicates(work)
    _drop_surplus(work)
    _refill(work)
    return _closer(task, work)


def _closer(task: TopicTask, work: Work) -> Placement:
    """The exact placement (``placement_flow``) where the greedy one copies more than
    the count-level bound, missed a quota or stopped at its budget, and the flow is
    affordable; otherwise the greedy one, marked when its search stopped early."""
    placed = Placement(map(tuple, work.kept))
    made = copies(task.current, placed)
    short = work.stopped or work.over_quota
    if not short and made <= count_bound(task.current, task.quota):
        return placed
    if affordable(len(task.current), task.quota, off_quota=short):
        exact = exact_placement(task.current, task.replication, task.quota, task.group_of,
                                task_rule(task))
        if exact is not None and (short or copies(task.current, exact) < made):
            return Placement(exact)
    elif work.over_quota:
        placed = _requota(task, work, placed)
    placed.stopped_early = work.stopped
    return placed


def _requota(task: TopicTask, work: Work, placed: Placement) -> Placement:
    """A topic too large for the whole flow whose greedy placement missed a quota: the
    flow re-places the partitions that took a replica above quota, then those the greedy
    changed, then the others in order, as many as it affords; the rest stay put. Back on
    every quota, though not with the topic's fewest copies."""
    takers = sum(1 for q in task.quota.values() if q > 0)
    room = max(1, placement_flow.MAX_EDGES // max(1, takers))
    changed = (p for p, reps in enumerate(placed) if set(reps) != set(task.current[p]))
    chosen = list(dict.fromkeys(chain(sorted(work.fallen), changed, range(len(placed)))))[:room]
    picked = set(chosen)
    quota = dict(task.quota)
    for pid, reps in enumerate(placed):
        if pid not in picked:
            for spu in reps:
                quota[spu] = quota.get(spu, 0) - 1
    if min(quota.values(), default=0) < 0:
        return placed
    part = exact_placement([task.current[p] for p in chosen], task.replication, quota,
                           task.group_of, task_rule(task))
    if part is None:
        return placed
    rows = list(placed)
    for pid, reps in zip(chosen, part):
        rows[pid] = reps
    return Placement(rows)


def _drop_rack_duplicates(work: Work) -> None:
    """Release every replica of a crowded rack; refill picks which one returns.
    With fewer racks than replicas see ``_spread_out``."""
    if work.cap > 1:
        _spread_out(work)
        return
    group_of = work.key.__getitem__
    for pid, reps in enumerate(work.kept):
        if len(set(map(group_of, reps))) == len(reps):
            continue
        by_group: dict[str | None, list[int]] = {}
        for spu in reps:
            by_group.setdefault(work.group(spu), []).append(spu)
        for members in by_group.values():
            if len(members) > 1:
                for spu in members:
                    work.drop(pid, spu)
                work.released.add(pid)


def _spread_out(work: Work) -> None:
    """A partition that cannot reach its rack spread by adding replicas drops,
    one at a time, a replica of a repeated rack: the one whose SPU is furthest
    above quota (a follower before the leader), until it can."""
    replication, rule, key = work.task.replication, work.rule, work.key
    for pid, reps in enumerate(work.kept):
        while misplaced([key[s] for s in reps], replication, rule):
            keys = [key[s] for s in reps]
            repeated = [s for s in reps if keys.count(key[s]) > 1]
            spu = max(repeated, key=lambda s: (work.excess(s), s != reps[0], s))
            work.drop(pid, spu)
            work.released.add(pid)


def _release_over_replicated(work: Work) -> None:
    """A partition above its new replication factor chooses its survivors
    afresh during refill, where its own replicas cost nothing to keep."""
    target = work.task.replication
    if max(map(len, work.kept), default=0) <= target:
        return  # the usual case: the replication factor did not drop
    for pid, reps in enumerate(work.kept):
        if len(reps) > target:
            for spu in list(reps):
                work.drop(pid, spu)
            work.released.add(pid)


def _drop_surplus(work: Work) -> None:
    have = work.have
    over = {s for s, n in have.items() if n > work.quota[s]}
    if not over:
        return
    # Partitions holding each SPU above quota (the only ones that drop any).
    holders: dict[int, list[int]] = {s: [] for s in over}
    kept = work.kept
    for pid in compress(range(len(kept)), map(not_, map(over.isdisjoint, kept))):
        for spu in kept[pid]:
            if spu in over:
                holders[spu].append(pid)
    # ``work.excess`` inlined: every SPU of every topic passes here.
    wanting = sorted((s for s, q in work.quota.items() if have[s] < q),
                     key=lambda s: (have[s] - work.quota[s], s))
    for spu in sorted(holders):
        surplus = work.excess(spu)
        if surplus <= 0:
            continue
        # Free slots where the SPUs missing most can go; keep leaders in place.
        # A partition already missing a replica would need two compatible newcomers.
        target = work.task.replication
        sizes = work.task.sizes
        pids = sorted(holders[spu], key=lambda p: (len(work.kept[p]) < target,
                                                    -_refill_need(work, p, spu, wanting),
                                                    work.kept[p][0] == spu,
                                                    sizes[p] if sizes else 0, p))
        for pid in pids[:surplus]:
            work.drop(pid, spu)


def _refill_need(work: Work, pid: int, leaving: int, wanting: list[int]) -> int:
    """How many replicas the neediest SPU that could take this slot misses."""
    for spu in wanting:
        if _fits_instead(work, pid, spu, leaving):
            return -work.excess(spu)
    return 0


def _refill(work: Work) -> None:
    target = work.task.replication
    have = work.have
    deficit = Deficits({s: q - have[s] for s, q in work.quota.items() if have[s] < q})
    # Only partitions short of replicas take any; a chain through another
    # partition swaps one of its replicas and leaves its length alone.
    for pid in compress(range(len(work.kept)), map(target.__gt__, map(len, work.kept))):
        reps = work.kept[pid]
        while len(reps) < target:
            spu = _best_candidate(work, pid, deficit)
            if spu is not None and spu not in work.original[pid] and pid in work.released \
                    and not work.stopped and augment(work, pid, deficit, max_cost=0):
                continue
            if spu is not None:
                deficit.charge(spu)
                work.add(pid, spu)
            elif work.stopped or (not augment(work, pid, deficit)
                                  and not augment(work, pid, deficit, limit=None)):
                # The short search first: the exhaustive one is rarely needed. Past the
                # budget, or with no chain, an SPU takes a replica above its quota.
                work.over_quota = True
                work.fallen.add(pid)
                work.add(pid, _fallback(work, pid))


def _best_candidate(work: Work, pid: int, deficit: Deficits) -> int | None:
    # A replica the partition held before costs no copy.
    back = [s for s in work.original[pid] if s in deficit.missing and work.fits(pid, s)]
    if back:
        return min(back, key=lambda s: (-deficit.missing[s], s))
    return next((s for s in deficit if work.fits(pid, s)), None)


def _fits_instead(work: Work, pid: int, spu: int, leaving: int) -> bool:
    others = [r for r in work.kept[pid] if r != leaving]
    if spu in others:
        return False
    if work.groups is None:
        return True
    if work.cap > 1:
        return work.groups[spu] not in work.blocked(pid, leaving)
    return work.groups[spu] not in map(work.groups.__getitem__, others)


def _fallback(work: Work, pid: int) -> int:
    """No SPU below quota fits: take the least loaded one that does."""
    for ignore_groups in (False, True):
        fitting = [s for s in work.quota if work.fits(pid, s, ignore_groups)]
        if fitting:
            return min(fitting, key=lambda s: (work.excess(s), s))
    raise AssertionError("replication exceeds eligible SPUs")  # checked by scenarios
