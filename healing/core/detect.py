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

from healing.core.model import AnomalyType, Finding, PartitionView, Settings, Snapshot


def detect(snapshot: Snapshot, settings: Settings,
           slow: Iterable[tuple[int, int]] = ()) -> list[Finding]:
    """Every enabled anomaly the snapshot shows; ``slow`` is (SPU, shrinks in the window)."""
    found: list[Finding] = []
    if settings.spu_down_enabled:
        found += spus_down(snapshot)
    if settings.under_replicated_enabled:
        found += under_replicated(snapshot)
    settled = not spus_down(snapshot)
    if settled and settings.rack_spread_enabled:
        found += rack_spread(snapshot)
    if settled and settings.goal_violation_enabled:
        found += goal_violation(snapshot, settings)
    if settings.slow_spu_enabled:
        found += [Finding(AnomalyType.SLOW_SPU, f"spu-{spu}",
                          f"SPU {spu} left the LRS {n} times in {settings.slow_spu_window_s:g} s",
                          (spu,), n) for spu, n in slow if n >= settings.slow_spu_shrinks]
    return found


def replicas_per_spu(snapshot: Snapshot) -> Counter[int]:
    return Counter(s for p in snapshot.partitions for s in p.replicas)


def spus_down(snapshot: Snapshot) -> list[Finding]:
    """Registered SPUs that are down and still hold replicas."""
    held = replicas_per_spu(snapshot)
    return [Finding(AnomalyType.SPU_DOWN, f"spu-{s.id}",
                    f"SPU {s.id} is offline and holds {held[s.id]} replica(s)", (s.id,),
                    held[s.id])
            for s in snapshot.spus if s.registered and not s.online and held[s.id]]


def short_partitions(snapshot: Snapshot) -> list[PartitionView]:
    """Partitions with fewer replicas on registered SPUs than their topic's factor."""
    registered = {s.id for s in snapshot.spus if s.registered}
    return [p for p in snapshot.partitions
            if sum(r in registered for r in p.replicas) < p.factor]


def under_replicated(snapshot: Snapshot) -> list[Finding]:
    short = short_partitions(snapshot)
    if not short:
        return []
    return [Finding(AnomalyType.UNDER_REPLICATED, "topology",
                    f"{len(short)} partition(s) have fewer assigned replicas than their factor",
                    count=len(short))]


def rack_of(snapshot: Snapshot) -> dict[int, str | None]:
    return {s.id: s.rack for s in snapshot.spus}


def racks_up(snapshot: Snapshot) -> set[str]:
    return {s.rack for s in snapshot.spus if s.online and s.rack}


def spread_wanted(p: PartitionView, racks: dict[int, str | None], up: set[str]) -> int:
    """How many racks the partition should span: as many as its replicas, if racks are up."""
    return min(len(p.replicas), len(up)) if p.racks_apart else 0


def badly_spread(snapshot: Snapshot) -> list[PartitionView]:
    """Partitions spanning fewer racks than they could (Redpanda's rack-awareness goal)."""
    racks = rack_of(snapshot)
    if any(r is None for r in racks.values()):
        return []  # racks are kept apart only when every SPU has one (DESIGN.md)
    up = racks_up(snapshot)
    return [p for p in snapshot.partitions
            if len({racks.get(r) for r in p.replicas}) < spread_wanted(p, racks, up)]


def rack_spread(snapshot: Snapshot) -> list[Finding]:
    bad = badly_spread(snapshot)
    if not bad:
        return []
    return [Finding(AnomalyType.RACK_SPREAD, "racks",
                    f"{len(bad)} partition(s) span fewer racks than the racks up allow",
                    count=len(bad))]


def skew_exceeded(counts: list[int], percent: float) -> bool:
    """The busiest SPU above the mean by more than ``percent`` (whole replicas, rounded up:
    10 partitions on 3 SPUs is 4/3/3, and that is balanced)."""
    if not counts or sum(counts) == 0:
        return False
    mean = sum(counts) / len(counts)
    return max(counts) > math.ceil(mean * (1 + percent / 100) - 1e-9)


def goal_violation(snapshot: Snapshot, settings: Settings) -> list[Finding]:
    """Replica or preferred-leader skew over the SPUs that are up (Kafka's 10 % for leaders)."""
    up = [s.id for s in snapshot.spus if s.online]
    held = replicas_per_spu(snapshot)
    leading = Counter(p.replicas[0] for p in snapshot.partitions if p.replicas)
    problems = []
    if skew_exceeded([held[s] for s in up], settings.replica_skew_percent):
        problems.append(f"replica skew over {settings.replica_skew_percent:g} %")
    if skew_exceeded([leading[s] for s in up], settings.leader_skew_percent):
        problems.append(f"leader skew over {settings.leader_skew_percent:g} %")
    if not problems:
        return []
    return [Finding(AnomalyType.GOAL_VIOLATION, "balance", "; ".join(problems),
                    count=len(problems))]


InLrs = frozenset[tuple[str, int, int]]


def in_lrs(snapshot: Snapshot) -> InLrs:
    """(topic, partition, SPU) of every LRS member."""
    return frozenset((p.topic, p.partition, r) for p in snapshot.partitions for r in p.lrs)


def new_shrinks(before: InLrs, snapshot: Snapshot, now: InLrs | None = None) -> Counter[int]:
    """Per SPU: its replicas that left an LRS since ``before`` while the SPU stayed up and
    kept the replica (an SPU going down, or a replica moved away, is no sign of slowness).
    ``now``: ``in_lrs(snapshot)``, when the caller has it already."""
    gone = before - (in_lrs(snapshot) if now is None else now)
    if not gone:  # the usual run: reading every partition's replicas is for nothing
        return Counter()
    up = {s.id for s in snapshot.spus if s.online}
    held = {(p.topic, p.partition): p.replicas for p in snapshot.partitions}
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
