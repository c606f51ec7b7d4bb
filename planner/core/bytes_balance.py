"""Plans by bytes: disk bytes per SPU within a band of the best the racks allow, racks
kept, the fewest bytes moved, leaders balanced by bytes, no SPU over its disk limit.

Ideal loads (``ideal_loads``) are a water-fill: every replica byte shared out in
proportion to the SPUs' weights (their disk capacities where known), except that a rack
can hold at most one replica of a partition (``ceil(rf / racks)`` with fewer racks than
replicas), so a rack of a few SPUs facing many caps out and the rest is shared by the
others. A replica moves only off an SPU above the band, onto an SPU below its ideal, and
never more than the source's excess or the destination's room (where a replica that
small exists): bytes moved stay close to the excess above the band, which every plan
that meets the band must move at least (``cost.bytes_lower_bound``). A partition changes
at most once, except off a removed SPU, so each move is one copy in the execution order
(``cost.execution_order``).
"""
from __future__ import annotations

from bisect import bisect_right, insort
from collections.abc import Mapping
from dataclasses import dataclass, field
from heapq import heapify, heappop, heappush
from math import ceil, inf

from planner.core.metrics import layout_metrics, movement_metrics, moves_between
from planner.core.model import Cluster, Options, Plan, PlanError, Scenario
from planner.core.scenarios import apply_scenario

# How far above its ideal an SPU may end, as a share of the mean ideal load.
BAND = 0.05
# Replicas looked at per (source, destination) pair before the next destination.
SCAN = 64


@dataclass(frozen=True)
class ByteOptions:
    max_disk_percent: float = 80.0
    capacities: Mapping[int, int] = field(default_factory=dict)
    topics: frozenset[str] | None = None
    exclude_topics: frozenset[str] = frozenset()
    leaders_only: bool = False
    band: float = BAND


Key = tuple[str, int]


class _State:
    def __init__(self, cluster: Cluster, scenario: Scenario, options: Options,
                 opts: ByteOptions) -> None:
        if scenario.replication:
            raise PlanError("--balance bytes keeps replication factors; plan a factor "
                            "change by counts")
        if not any(any(t.sizes) for t in cluster.topics if t.sizes):
            raise PlanError("--balance bytes needs partition sizes: import "
                            "kafka-log-dirs output (cluster import --kafka-log-dirs)")
        eff = apply_scenario(cluster, scenario)
        unknown = sorted((set(opts.topics or ()) | set(opts.exclude_topics))
                         - {t.name for t in cluster.topics})
        if unknown:
            raise PlanError(f"unknown topic {unknown[0]!r} in --topics/--exclude-topics")
        self.eff, self.opts = eff, opts
        self.rack = {s: (spu.rack if options.anti_affinity and spu.rack else f"#{s}")
                     for s, spu in eff.every_spu.items()}
        self.racks = len({self.rack[s.id] for s in eff.spus})
        self.size: dict[Key, int] = {}
        self.reps: dict[Key, list[int]] = {}
        self.rf: dict[str, int] = {}
        self.load = dict.fromkeys(eff.every_spu, 0)
        self.movable: set[Key] = set()
        for topic in cluster.topics:
            self.rf[topic.name] = topic.replication
            in_scope = (opts.topics is None or topic.name in opts.topics) and \
                topic.name not in opts.exclude_topics
            for pid, reps in enumerate(topic.replicas):
                key = (topic.name, pid)
                size = topic.sizes[pid] if topic.sizes else 0
                self.size[key], self.reps[key] = size, list(reps)
                for s in reps:
                    self.load[s] += size
                if in_scope:
                    self.movable.add(key)
        self.limit = {s: opts.capacities[s] * opts.max_disk_percent / 100
                      if s in opts.capacities else inf for s in eff.every_spu}

    def group_cap(self, key: Key) -> int:
        return ceil(self.rf[key[0]] / self.racks) if self.racks else 1

    def fits(self, key: Key, dst: int, leaving: int) -> bool:
        reps = self.reps[key]
        if dst in reps:
            return False
        rack = self.rack[dst]
        same = sum(1 for r in reps if r != leaving and self.rack[r] == rack)
        return same < self.group_cap(key)


def ideal_loads(state: _State) -> dict[int, float]:
    """The best loads the racks allow (module text), by eligible SPU."""
    spus = state.eff.spus
    # Capacities weigh only when every SPU has one: bytes and plain weights do not mix.
    sized = all(s.id in state.opts.capacities for s in spus)
    weight = {s.id: float(state.opts.capacities[s.id] if sized else s.weight) for s in spus}
    total = sum(state.load.values())
    by_rack: dict[str, list[int]] = {}
    for s in spus:
        by_rack.setdefault(state.rack[s.id], []).append(s.id)
    # A rack holds at most ``group_cap`` copies of each partition (one when racks >= rf).
    per_rack = sum(size * state.group_cap(k) for k, size in state.size.items())
    cap = dict.fromkeys(by_rack, per_rack)
    rack_total, open_racks, left = {}, set(by_rack), float(total)
    while open_racks:
        share = left / sum(weight[s] for r in open_racks for s in by_rack[r])
        full = {r for r in open_racks if share * sum(weight[s] for s in by_rack[r]) > cap[r]}
        if not full:
            for r in open_racks:
                rack_total[r] = share * sum(weight[s] for s in by_rack[r])
            break
        for r in full:
            rack_total[r] = cap[r]
            left -= cap[r]
        open_racks -= full
    return {s: rack_total[r] * weight[s] / sum(weight[x] for x in members)
            for r, members in by_rack.items() for s in members}


def _place(state: _State, ideal: Mapping[int, float]) -> None:
    """Move replicas off SPUs above the band (or removed) onto SPUs below their ideal.
    Sources come off a heap by how far above the band they stand, destinations off a
    heap by how far below their ideal: entries are checked against the loads when
    taken, so a move updates two entries, not a scan of every SPU."""
    removed = state.eff.removed
    slack = state.opts.band * (sum(ideal.values()) / max(1, len(ideal)))
    high = {s: (0.0 if s in removed else min(ideal[s] + slack, state.limit[s]))
            for s in state.load}
    held: dict[int, list[tuple[int, str, int]]] = {s: [] for s in state.load}
    for key, reps in state.reps.items():
        if key in state.movable:
            for s in reps:
                held[s].append((state.size[key], *key))
    for rows in held.values():
        rows.sort()
    load = state.load

    def over_entry(s: int) -> tuple[int, float, int]:
        return (-(s in removed), high[s] - load[s], s)

    def is_over(s: int) -> bool:  # a removed SPU is over while it holds any replica
        return (load[s] > high[s] or s in removed) and bool(held[s])
    sources = [over_entry(s) for s in load if is_over(s)]
    heapify(sources)
    sinks = [(load[s] - ideal[s], s) for s in ideal if load[s] < ideal[s]]
    heapify(sinks)
    changed: set[Key] = set()
    while sources:
        entry = heappop(sources)
        src = entry[2]
        if entry != over_entry(src) or not is_over(src):
            continue  # stale: a newer entry (or none, once within the band) stands for it
        dsts = _take(sinks, load, ideal)
        if not dsts and src in removed:
            dsts = sorted(ideal, key=lambda s: load[s] - ideal[s])[:8]
        dst = _move_one(state, src, dsts, ideal, held, changed, removed)
        for s in dsts:
            if load[s] < ideal[s]:
                heappush(sinks, (load[s] - ideal[s], s))
        if dst is not None:
            for s in (src, dst):
                if is_over(s):
                    heappush(sources, over_entry(s))


def _take(sinks: list, load: Mapping[int, int], ideal: Mapping[int, float],
          count: int = 8) -> list[int]:
    """The ``count`` SPUs furthest below their ideal, off the heap (stale entries dropped)."""
    out: list[int] = []
    while sinks and len(out) < count:
        gap, s = heappop(sinks)
        if gap == load[s] - ideal[s] and s not in out and gap < 0:
            out.append(s)
    return out


def _move_one(state: _State, src: int, dsts: list[int], ideal: Mapping[int, float],
              held: dict[int, list[tuple[int, str, int]]], changed: set[Key],
              removed: frozenset[int]) -> int | None:
    """Move one replica off ``src`` onto the first of ``dsts`` that takes one; which."""
    excess = state.load[src] - (0 if src in removed else ideal[src])
    rows = held[src]
    for dst in dsts:
        room = ideal[dst] - state.load[dst]
        top = min(excess, room) if src not in removed else inf
        end = bisect_right(rows, (top, "\U0010ffff", 1 << 62)) if top != inf else len(rows)
        # The largest replica no bigger than the gap; failing that (a partition larger
        # than the gap) the smallest whose move still lowers the source's peak.
        candidates = list(range(end - 1, max(-1, end - 1 - SCAN), -1))
        candidates += list(range(end, min(len(rows), end + SCAN)))
        for i in candidates:
            size, topic, pid = rows[i]
            key = (topic, pid)
            if key in changed and src not in removed:
                continue
            if state.load[dst] + size > state.limit[dst]:
                continue
            if i >= end and src not in removed and \
                    state.load[dst] + size - ideal[dst] >= excess:
                continue
            if not state.fits(key, dst, src):
                continue
            reps = state.reps[key]
            reps[reps.index(src)] = dst
            state.load[src] -= size
            state.load[dst] += size
            del rows[i]
            insort(held[dst], (size, topic, pid))
            changed.add(key)
            return dst
    return None


def _leaders(state: _State, current: Mapping[Key, int | None],
             ideal: Mapping[int, float]) -> dict[Key, int]:
    """Keep each leader unless it left, is removed, or leads too many bytes: then the
    replica furthest below its share of leader bytes leads."""
    removed = state.eff.removed
    total = sum(ideal.values()) or 1.0
    led_total = sum(state.size.values())
    share = {s: led_total * ideal[s] / total for s in ideal}
    leader: dict[Key, int] = {}
    led = dict.fromkeys(state.load, 0)
    for key, reps in state.reps.items():
        lead = current.get(key)
        if lead not in reps or lead in removed:
            live = [r for r in reps if r not in removed] or reps
            lead = min(live, key=lambda r: (led[r] - share.get(r, 0), r))
        leader[key] = lead
        led[lead] += state.size[key]
    slack = state.opts.band * led_total / max(1, len(share))
    for key in sorted(state.reps, key=lambda k: -state.size[k]):
        lead, size = leader[key], state.size[key]
        if key not in state.movable or led[lead] <= share.get(lead, 0) + slack:
            continue
        best = min((r for r in state.reps[key] if r in share),
                   key=lambda r: (led[r] - share[r], r), default=lead)
        if best != lead and led[best] + size - share[best] < led[lead] - share.get(lead, 0):
            leader[key] = best
            led[lead] -= size
            led[best] += size
    return leader


def plan_bytes(cluster: Cluster, scenario: Scenario | None = None,
               options: Options | None = None, opts: ByteOptions | None = None) -> Plan:
    scenario, options, opts = scenario or Scenario(), options or Options(), \
        opts or ByteOptions()
    state = _State(cluster, scenario, options, opts)
    ideal = ideal_loads(state)
    placeable = sum(min(state.limit[s], inf) for s in ideal)
    if sum(state.load.values()) > placeable:
        raise PlanError(f"the replicas need {sum(state.load.values()):,} bytes; the SPUs may "
                        f"hold {placeable:,.0f} at --max-disk-percent {opts.max_disk_percent}")
    before_loads = dict(state.load)
    current = {(t.name, p): lead for t in cluster.topics
               for p, lead in enumerate(t.current_leaders)}
    if not opts.leaders_only:  # a leaders-only plan moves no data (a rolling restart)
        _place(state, ideal)
        left = sorted({s for reps in state.reps.values() for s in reps} & state.eff.removed)
        if left:
            raise PlanError(f"SPU {left[0]} cannot be emptied: no SPU with room in a rack "
                            "its replicas may use, or a topic out of scope holds some")
        full = [s for s in ideal if state.load[s] > state.limit[s]]
        if full:
            raise PlanError(f"SPU {full[0]} would stay above --max-disk-percent "
                            f"{opts.max_disk_percent}: no SPU can take its replicas")
    leader = _leaders(state, current, ideal)
    target = {}
    for topic in cluster.topics:
        rows = []
        for pid in range(topic.partitions):
            reps, lead = state.reps[(topic.name, pid)], leader[(topic.name, pid)]
            rows.append((lead, *[r for r in reps if r != lead]))
        target[topic.name] = tuple(rows)
    before = {t.name: t.replicas for t in cluster.topics}
    moves = moves_between(before, target, {t.name: t.current_leaders for t in cluster.topics})
    metrics = {**movement_metrics(moves, cluster.topics, 0),
               **layout_metrics(target, state.eff.spus),
               **_disk_metrics(state, ideal, before_loads)}
    return Plan(scenario, options, target, moves, metrics,
                {**layout_metrics(before, cluster.spus),
                 "disk_spread": _spread(before_loads, ideal)})


def _spread(loads: Mapping[int, int], ideal: Mapping[int, float]) -> int:
    return int(max(loads[s] - ideal[s] for s in ideal) if ideal else 0)


def _disk_metrics(state: _State, ideal: Mapping[int, float],
                  before: Mapping[int, int]) -> dict[str, object]:
    mean = sum(ideal.values()) / max(1, len(ideal))
    return {"balance": "bytes", "disk_spread": _spread(state.load, ideal),
            "band_bytes": int(state.opts.band * mean),
            "disk_before": {str(s): before[s] for s in sorted(before)},
            "disk_after": {str(s): state.load[s] for s in sorted(state.load)},
            "disk_ideal": {str(s): int(ideal[s]) for s in sorted(ideal)},
            "disk_limit": {str(s): int(state.limit[s]) for s in sorted(state.limit)
                           if state.limit[s] != inf}}
