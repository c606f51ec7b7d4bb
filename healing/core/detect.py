"""Anomaly detection: the conditions one snapshot of the cluster shows.

Each detector reads the snapshot only. The SPU-down detector is the root of
the others: while an SPU that is down still holds replicas, the spread and
balance detectors stay quiet (their figures would describe a cluster in the
middle of losing a node, and the drain fixes them first).
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Iterable
from functools import partial
from typing import AbstractSet, NamedTuple

from healing.core import overlaid
from healing.core.model import (AnomalyType, Finding, PartitionView, Settings, Snapshot,
                                SpuView)


def detect(snapshot: Snapshot, settings: Settings,
           slow: Iterable[tuple[int, int]] = (), counts: Tally | None = None) -> list[Finding]:
    """Every enabled anomaly the snapshot shows; ``slow`` is (SPU, shrinks in the window);
    ``counts``: the partitions' ``tally`` (made here when not given)."""
    counts = counts if counts is not None else tally(snapshot.partitions, snapshot.spus)
    found: list[Finding] = []
    down = _spus_down(snapshot, counts.held)
    if settings.spu_down_enabled:
        found += down
    if settings.under_replicated_enabled:
        found += _under_replicated(counts.short)
    settled = not down
    if settled and settings.rack_spread_enabled:
        found += _rack_spread(counts.spread)
    if settled and settings.goal_violation_enabled:
        found += _goal_violation(snapshot, settings, counts)
    if settings.slow_spu_enabled:
        found += [Finding(AnomalyType.SLOW_SPU, f"spu-{spu}",
                          f"SPU {spu} left the LRS {n} times in {settings.slow_spu_window_s:g} s",
                          (spu,), n) for spu, n in slow if n >= settings.slow_spu_shrinks]
    return found


class Tally(NamedTuple):
    """What the detectors count over every partition, kept so that a few partitions moved
    cost a few partitions (``tally_moved``): replicas and preferred leaders by SPU, the
    partitions short of replicas on registered SPUs, and those spread over too few racks."""
    held: Counter[int]
    leading: Counter[int]
    short: int
    spread: int


class Basis(NamedTuple):
    """What a partition's counts depend on besides itself (``tally``): the SPUs registered,
    their racks and the racks up. An SPU going down changes none of it while its rack has
    another SPU up, so the counts are kept up to date through an outage."""
    registered: frozenset[int]
    racks: dict[int, str | None]
    up: set[str]
    racked: bool  # every SPU has a rack: only then are racks kept apart (DESIGN.md)


def tally_basis(spus: Iterable[SpuView]) -> Basis:
    spus = tuple(spus)
    racks = {s.id: s.rack for s in spus}
    return Basis(frozenset(s.id for s in spus if s.registered), racks,
                 {s.rack for s in spus if s.online and s.rack},
                 not any(r is None for r in racks.values()))


def tally(partitions: Iterable[PartitionView], spus: Iterable[SpuView]) -> Tally:
    """The detectors' counts over ``partitions``, with the SPUs ``spus``."""
    seen = tally_basis(spus)
    partitions = tuple(partitions)
    return Tally(Counter(s for p in partitions for s in p.replicas),
                 Counter(p.replicas[0] for p in partitions if p.replicas),
                 sum(map(partial(_short, seen), partitions)),
                 sum(map(partial(_badly_spread, seen), partitions)))


def tally_moved(counts: Tally, spus: Iterable[SpuView],
                moved: Iterable[tuple[PartitionView, PartitionView]]) -> Tally:
    """``counts`` with each partition ``moved`` (its view before, its view now) counted as
    it is now; the SPUs' ``tally_basis`` must be the one ``counts`` was made with."""
    seen, held, leading = tally_basis(spus), Counter(counts.held), Counter(counts.leading)
    short, spread = counts.short, counts.spread
    for before, now in moved:
        held.subtract(before.replicas)
        held.update(now.replicas)
        leading.subtract(before.replicas[:1])
        leading.update(now.replicas[:1])
        short += _short(seen, now) - _short(seen, before)
        spread += _badly_spread(seen, now) - _badly_spread(seen, before)
    return Tally(+held, +leading, short, spread)


def _short(seen: Basis, p: PartitionView) -> bool:
    return sum(r in seen.registered for r in p.replicas) < p.factor


def _badly_spread(seen: Basis, p: PartitionView) -> bool:
    # Racks are kept apart only when every SPU has one (DESIGN.md).
    return seen.racked and len({seen.racks.get(r) for r in p.replicas}) < \
        spread_wanted(p, seen.racks, seen.up)


def _spus_down(snapshot: Snapshot, held: Counter[int]) -> list[Finding]:
    """Registered SPUs that are down and still hold replicas."""
    return [Finding(AnomalyType.SPU_DOWN, f"spu-{s.id}",
                    f"SPU {s.id} is offline and holds {held[s.id]} replica(s)", (s.id,),
                    held[s.id])
            for s in snapshot.spus if s.registered and not s.online and held[s.id]]


def short_partitions(snapshot: Snapshot) -> list[PartitionView]:
    """Partitions with fewer replicas on registered SPUs than their topic's factor."""
    basis = tally_basis(snapshot.spus)
    return [p for p in snapshot.partitions if _short(basis, p)]


def _under_replicated(short: int) -> list[Finding]:
    if not short:
        return []
    return [Finding(AnomalyType.UNDER_REPLICATED, "topology",
                    f"{short} partition(s) have fewer assigned replicas than their factor",
                    count=short)]


def rack_of(snapshot: Snapshot) -> dict[int, str | None]:
    return {s.id: s.rack for s in snapshot.spus}


def racks_up(snapshot: Snapshot) -> set[str]:
    return {s.rack for s in snapshot.spus if s.online and s.rack}


def spread_wanted(p: PartitionView, racks: dict[int, str | None], up: set[str]) -> int:
    """How many racks the partition should span: as many as its replicas, if racks are up."""
    return min(len(p.replicas), len(up)) if p.racks_apart else 0


def badly_spread(snapshot: Snapshot) -> list[PartitionView]:
    """Partitions spanning fewer racks than they could (Redpanda's rack-awareness goal)."""
    basis = tally_basis(snapshot.spus)
    return [p for p in snapshot.partitions if _badly_spread(basis, p)]


def _rack_spread(bad: int) -> list[Finding]:
    if not bad:
        return []
    return [Finding(AnomalyType.RACK_SPREAD, "racks",
                    f"{bad} partition(s) span fewer racks than the racks up allow",
                    count=bad)]


def skew_exceeded(counts: list[int], percent: float) -> bool:
    """The busiest SPU above the mean by more than ``percent`` (whole replicas, rounded up:
    10 partitions on 3 SPUs is 4/3/3, and that is balanced)."""
    if not counts or sum(counts) == 0:
        return False
    mean = sum(counts) / len(counts)
    return max(counts) > math.ceil(mean * (1 + percent / 100) - 1e-9)


def _goal_violation(snapshot: Snapshot, settings: Settings, counts: Tally) -> list[Finding]:
    """Replica or preferred-leader skew over the SPUs that are up (Kafka's 10 % for leaders)."""
    up = [s.id for s in snapshot.spus if s.online]
    held, leading = counts.held, counts.leading
    problems = []
    if skew_exceeded([held[s] for s in up], settings.replica_skew_percent):
        problems.append(f"replica skew over {settings.replica_skew_percent:g} %")
    if skew_exceeded([leading[s] for s in up], settings.leader_skew_percent):
        problems.append(f"leader skew over {settings.leader_skew_percent:g} %")
    if not problems:
        return []
    return [Finding(AnomalyType.GOAL_VIOLATION, "balance", "; ".join(problems),
                    count=len(problems))]


# A frozenset, or the same set as a base and its changes (overlaid.Overlaid).
InLrs = AbstractSet[tuple[str, int, int]]


def in_lrs(snapshot: Snapshot) -> InLrs:
    """(topic, partition, SPU) of every LRS member."""
    return frozenset((p.topic, p.partition, r) for p in snapshot.partitions for r in p.lrs)


# The LRS members that left and that joined (topic, partition, SPU), netted.
LrsChange = tuple[InLrs, InLrs]


def lrs_changed(moved: Iterable[tuple[PartitionView, PartitionView]]) -> LrsChange:
    """The members that left an LRS and those that joined one over ``moved`` (each
    partition's view before, its view now, in order: one may move several times), netted:
    a member that left and came back is in neither."""
    first: dict[tuple[str, int], PartitionView] = {}
    last: dict[tuple[str, int], PartitionView] = {}
    for before, now in moved:
        first.setdefault((before.topic, before.partition), before)
        last[(now.topic, now.partition)] = now
    gone = {(b.topic, b.partition, r) for b in first.values() for r in b.lrs}
    came = {(n.topic, n.partition, r) for n in last.values() for r in n.lrs}
    return frozenset(gone - came), frozenset(came - gone)


def in_lrs_moved(members: InLrs, moved: Iterable[tuple[PartitionView, PartitionView]]
                 ) -> InLrs:
    """``members`` with each partition ``moved`` (its view before, its view now, in order:
    one may move several times) as it is now."""
    return in_lrs_changed(members, lrs_changed(moved))


def in_lrs_changed(members: InLrs, change: LrsChange) -> InLrs:
    """``members`` less those that left, with those that joined (``lrs_changed``), in time
    proportional to the change (``overlaid.changed``: no copy of every member)."""
    left, joined = change
    return overlaid.changed(members, frozenset(left), frozenset(joined))


def new_shrinks(before: InLrs, snapshot: Snapshot, now: InLrs | None = None) -> Counter[int]:
    """Per SPU: its replicas that left an LRS since ``before`` while the SPU stayed up and
    kept the replica (an SPU going down, or a replica moved away, is no sign of slowness).
    ``now``: ``in_lrs(snapshot)``, when the caller has it already."""
    return shrinks_of(before - (in_lrs(snapshot) if now is None else now), snapshot)


def shrinks_of(gone: InLrs, snapshot: Snapshot) -> Counter[int]:
    """``new_shrinks`` of the members that left an LRS since the last run, ``gone``."""
    if not gone:  # the usual run: reading every partition's replicas is for nothing
        return Counter()
    up = {s.id for s in snapshot.spus if s.online}
    # The replicas of the partitions that lost a member alone: a dict of every partition
    # was 0.27 s of a run after an outage at 100,000 partitions.
    lost: dict[str, set[int]] = {}
    for topic, pid, _ in gone:
        lost.setdefault(topic, set()).add(pid)
    held = {(p.topic, p.partition): p.replicas for p in snapshot.partitions
            if p.topic in lost and p.partition in lost[p.topic]}
    return Counter(spu for (topic, pid, spu) in gone
                   if spu in up and spu in held.get((topic, pid), ()))


def shrinks_in_window(history: dict[int, list[int]], fresh: Counter[int], at_ms: int,
                      window_s: float, went_down: Collection[int] = ()
                      ) -> dict[int, list[int]]:
    """Each SPU's shrink times within the window, with the fresh ones added at ``at_ms``.

    ``went_down``: SPUs that went down since the last run. Their LRS exits, earlier and
    fresh, are forgotten: a leader drops a silent follower before the SPU is declared
    down, and one that went down and came back between two runs is out of the LRS while
    it catches up; either way it went down, which is no sign of slowness however often
    it happens or whatever the check interval.
    """
    since = at_ms - int(window_s * 1000)
    kept = {spu: [t for t in times if t > since] for spu, times in history.items()
            if spu not in went_down}
    for spu, n in fresh.items():
        if spu not in went_down:
            kept.setdefault(spu, []).extend([at_ms] * n)
    return {spu: times for spu, times in kept.items() if times}
