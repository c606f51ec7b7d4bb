"""Seeded random fault schedules over the pure core, checked step by step.

Each seed builds a small cluster (1-6 SPUs, one or two topics with replication
1 to 5, random max_lag / min_lrs / lag time) and plays a random interleaving of
produces (acks 0/1/all), single follower fetches (some throttled: slow
followers), whole-cluster ticks, SPU crashes and restarts, candidate notices
delivered, failed or lost, promotion reports delivered late or lost, election
timers firing before or after the report (stale ones included), committed and
uncommitted reads, and clock advances; and reassignments to random targets
(growing, shrinking or reordering the replica list, some asking for the
preferred leader, some with a short timeout), cancellations, crashes of a
moving set's SPUs, and operator unclean elections on leaderless sets (some
topics also allow unclean election by setting), and log compactions keeping
0-3 committed records (drawn from a stream of their own, so every other draw
of a seed is what it was before compaction joined). The InvariantChecker runs
after every step. A final heal phase brings every SPU back and checks that every replica
set comes back Online with all replicas identical and no move left in flight
(liveness).

A failure raises InvariantViolation naming the seed; ``replay(seed)`` replays
it printing every event and the actions it produced.
"""
from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, fields
from random import Random
from typing import Callable

from cluster.core.replication import links
from cluster.core.replication.compaction import compact, reference_replica
from cluster.core.replication.controller import handle
from cluster.core.replication.election import spu_receive_notice
from cluster.core.replication.events import (
    Action, CancelReassignment, ElectUncleanLeader, Event, FollowerFetch, MoveCompleted,
    MoveRolledBack, NotifyCandidate, ProduceRequest, ReassignPartition, ReconcileElections,
    ReplicationTick, SpuOffline, SpuOnline, StartElectionTimer, TimerFired,
    UncleanLeaderElected)
from cluster.core.replication.produce import consume
from cluster.core.replication.state import (Acks, ClusterState, Isolation, Replica, Resolution,
                                            new_cluster)
from cluster.core.replication.timers import run_elections
from cluster.core.replication.topology import add_topic
from cluster.testing.invariants import InvariantChecker, InvariantViolation

_ACKS = (Acks.NONE, Acks.LEADER, Acks.ALL)


@dataclass
class _Counts:
    """What a schedule did; totals add them up field by field."""
    steps: int = 0
    produced: int = 0
    acked_all: int = 0
    elections: int = 0
    crashes: int = 0
    moves: int = 0
    moves_completed: int = 0
    rollbacks: int = 0
    unclean: int = 0
    compactions: int = 0
    cuts: int = 0
    expiries: int = 0
    inbound_cuts: int = 0   # one-way cuts of what the SPUs are sent
    missed_epochs: int = 0  # replicas deaf to the SC when their set's leader changed


@dataclass
class ScheduleReport(_Counts):
    seed: int = 0


@dataclass
class FaultTotals(_Counts):
    schedules: int = 0
    seconds: float = 0.0

    def add(self, r: ScheduleReport) -> None:
        self.schedules += 1
        for f in fields(_Counts):
            setattr(self, f.name, getattr(self, f.name) + getattr(r, f.name))


def random_cluster(rng: Random) -> ClusterState:
    rf = rng.randint(1, 5)
    n = rng.randint(rf, 6)
    state = new_cluster(range(n), election_timeout_ms=100)
    for t in range(rng.randint(1, 2)):
        r = rf if t == 0 else rng.randint(1, min(5, n))
        parts = [rng.sample(range(n), r) for _ in range(rng.randint(1, 2))]
        add_topic(state, f"t{t}", parts, max_lag=rng.choice((1, 2, 4, 1000)),
                  min_lrs=rng.randint(1, r), lag_time_max_ms=rng.choice((None, None, 50)),
                  unclean_leader_election=rng.random() < 0.2)
    return state


class _Run:
    def __init__(self, seed: int, out: Callable[[str], None] | None) -> None:
        self.rng = Random(seed)
        self.compaction = Random(seed * 7919 + 1)
        # The engine's way of running elections (deadlines and notices as state), drawn
        # from a stream of its own like compaction, so the other draws stay the seed's.
        self.elections_rng = Random(seed * 104729 + 3)
        # Network cuts, a stream of their own too (``links``).
        self.links_rng = Random(seed * 15485863 + 5)
        self.report = ScheduleReport(seed=seed)
        self.out = out
        self.state = random_cluster(self.rng)
        self.keys = sorted(self.state.replica_sets)
        self.spus = sorted(self.state.spus)
        self.checker = InvariantChecker()
        self.notices: list[NotifyCandidate] = []
        self.responses: list[Event] = []
        self.timers: list[TimerFired] = []
        self.recent: deque = deque(maxlen=25)
        self.now = 0
        self.checker.check(self.state)

    def apply(self, event: Event) -> None:
        self.recent.append(event)
        actions = handle(self.state, event)
        if self.out:
            self.out(f"{event}\n    -> {actions}")
        for a in actions:
            if isinstance(a, NotifyCandidate):
                self.notices.append(a)
                self.report.elections += 1
            elif isinstance(a, StartElectionTimer):
                self.timers.append(TimerFired(a.topic, a.partition, a.candidate, a.attempt))
            else:
                self._count(a)
        self.checker.check(self.state, actions)
        self.report.acked_all += self.checker.observe(self.state, actions)

    def _count(self, a: Action) -> None:
        r = self.report
        r.moves_completed += isinstance(a, MoveCompleted)
        r.rollbacks += isinstance(a, MoveRolledBack)
        r.unclean += isinstance(a, UncleanLeaderElected)

    def elections_pass(self) -> None:
        """``run_elections`` as every engine step runs it, some SPU loops stopped."""
        rng = self.elections_rng
        if rng.random() >= 0.06:
            return
        up = [s for s, alive in self.state.spus.items() if alive]
        stopped = set(rng.sample(up, rng.randint(0, len(up)))) if up else set()
        self.now += rng.choice((0, 0, 200, 600))
        self.recent.append(("run_elections", self.now, sorted(stopped)))
        actions = run_elections(self.state, self.now, stopped)
        if self.out:
            self.out(f"run_elections(now={self.now}, stopped={sorted(stopped)})\n    -> {actions}")
        for a in actions:
            if not isinstance(a, (NotifyCandidate, StartElectionTimer)):
                self._count(a)
        self.checker.check(self.state, actions)
        self.report.acked_all += self.checker.observe(self.state, actions)

    def deliver_notice(self, succeed: bool) -> None:
        notice = self.notices.pop(self.rng.randrange(len(self.notices)))
        self.recent.append((notice, "delivered", succeed))
        reply = spu_receive_notice(self.state, notice, succeed=succeed)
        if self.out:
            self.out(f"deliver {notice} succeed={succeed}\n    -> {reply}")
        if reply is not None:
            self.responses.append(reply)
        self.checker.check(self.state)

    def _pop(self, items: list) -> Event:
        return items.pop(self.rng.randrange(len(items)))

    def step(self) -> None:
        rng, x = self.rng, self.rng.random()
        key = self.keys[rng.randrange(len(self.keys))]
        if rng.random() < 0.08:
            self._move_event(key)
        elif x < 0.30:
            count = rng.choice((1, 1, 1, 2, 3))
            self.report.produced += count
            self.apply(ProduceRequest(*key, rng.choice(_ACKS), count))
        elif x < 0.52:
            spu = rng.choice(self.state.replica_sets[key].replicas)
            self.apply(FollowerFetch(*key, spu, rng.choice((None, None, 1, 2)), self.now))
        elif x < 0.57:
            self.apply(ReplicationTick(self.now, rng.choice((None, 1))))
        elif x < 0.64:
            self._crash()
        elif x < 0.71:
            # An SPU whose session a cut broke comes back only when the cut heals.
            down = [s for s in self.spus
                    if not self.state.spus[s] and s not in self.state.expired]
            if down:
                self.apply(SpuOnline(rng.choice(down)))
        else:
            self._deliveries(x, key)
        self._maybe_compact()
        self._maybe_cut()

    def _maybe_cut(self) -> None:
        """Cut a link (to the SC, another SPU or the producers; some one-way), let the
        SC's session timeout pass for SPUs whose heartbeats stopped, or heal."""
        rng, state = self.links_rng, self.state
        x = rng.random()
        if x < 0.03 and len(state.cuts) < 2:
            self.report.cuts += 1
            cut = self._random_cut(rng)
            self.report.inbound_cuts += cut.inbound
            self.apply(cut)
        elif x < 0.07:
            for spu in [s for s in self.spus if state.spus[s] and not links.beats(state, s)]:
                self.report.expiries += 1
                self.apply(links.SessionExpired(spu))
        elif x < 0.09 and state.cuts:
            self.report.missed_epochs += sum(len(rs.unaware) for rs in state.replica_sets.values())
            self.apply(links.HealLinks(rng.choice([None, rng.choice(state.cuts).id])))

    def _random_cut(self, rng: Random) -> links.CutLinks:
        kind = rng.choice(("controller", "controller", "spu", "producers", "racks"))
        side = tuple(rng.sample(self.spus, 1 if kind != "racks" else rng.randint(1, min(2, len(self.spus)))))
        rest = [s for s in self.spus if s not in side]
        if kind in ("spu", "racks") and not rest:
            kind = "controller"
        peers = () if kind in ("controller", "producers") else (
            (rng.choice(rest),) if kind == "spu" else tuple(rest))
        one_way = rng.random() < 0.3
        # Half the one-way cuts drop what the SPUs are sent instead (not a rack split).
        inbound = one_way and kind != "racks" and rng.random() < 0.5
        return links.CutLinks(kind, side, peers, one_way, now_ms=self.now, inbound=inbound)

    def _maybe_compact(self) -> None:
        rng = self.compaction
        if rng.random() < 0.1:
            key, retain = rng.choice(self.keys), rng.randint(0, 3)
            # As the shell's save compacts: a steady set in place, its HW written first.
            self.state.steady.settle_levels(self.state.replica_sets)
            rs = self.state.replica_sets[key]
            before = reference_replica(rs).start
            start = compact(rs, retain)
            self.recent.append(("compact", key, retain, start))
            self.report.compactions += start > before  # counts those that forgot records
            self.checker.check(self.state)

    def _crash(self) -> None:
        up = [s for s in self.spus if self.state.spus[s]]
        if up:
            self.report.crashes += 1
            self.apply(SpuOffline(self.rng.choice(up)))

    def _move_event(self, key: tuple[str, int]) -> None:
        x, rs = self.rng.random(), self.state.replica_sets[key]
        if x < 0.55 and rs.move is None:
            self._reassign(key)
        elif x < 0.75 and rs.move is not None:
            self.apply(CancelReassignment(*key))
        elif x < 0.9 and rs.move is not None:
            up = [s for s in rs.replicas if self.state.spus[s]]
            if up:
                self.report.crashes += 1
                self.apply(SpuOffline(self.rng.choice(up)))
        else:
            self._force_unclean(key)

    def _reassign(self, key: tuple[str, int]) -> None:
        rng, rs = self.rng, self.state.replica_sets[key]
        low = self.state.topics[key[0]].min_lrs
        target = rng.sample(self.spus, rng.randint(low, min(5, len(self.spus))))
        if target == rs.replicas:
            return
        self.report.moves += 1
        self.apply(ReassignPartition(*key, tuple(target), rng.random() < 0.3,
                                     rng.choice((None, 50, 200)), self.now))

    def _force_unclean(self, key: tuple[str, int]) -> None:
        rs, spus = self.state.replica_sets[key], self.state.spus
        live = [s for s in rs.replicas if spus[s]]
        if rs.resolution is Resolution.ONLINE or not live or any(spus[s] for s in rs.lrs):
            return
        self.checker.allow_unclean(key)
        self.apply(ElectUncleanLeader(*key, self.rng.choice(live + [None])))

    def _deliveries(self, x: float, key: tuple[str, int]) -> None:
        rng = self.rng
        if x < 0.79 and self.notices:
            self.deliver_notice(rng.random() < 0.85)
        elif x < 0.86 and self.responses:
            self.apply(self._pop(self.responses))
        elif x < 0.88:
            for queue in (self.notices, self.responses):
                if queue and rng.random() < 0.5:
                    self.recent.append(("lost", self._pop(queue)))
        elif x < 0.94 and self.timers:
            self.apply(self._pop(self.timers))
        elif x < 0.98:
            self._read(key)
        elif x < 0.995:
            self.now += rng.choice((10, 30, 60))
        else:
            self.apply(ReconcileElections())

    def _read(self, key: tuple[str, int]) -> None:
        rs = self.state.steady.view(self.state.replica_sets[key])
        if rs.resolution is not Resolution.ONLINE:
            return
        offset = self.rng.randint(0, rs.hw)
        self.checker.check_consumed(rs, consume(self.state, *key, offset))
        loose = consume(self.state, *key, rs.hw, isolation=Isolation.UNCOMMITTED)
        if loose.next_offset != loose.leo:
            raise InvariantViolation(f"{key}: UNCOMMITTED read stopped short of LEO")

    def heal(self) -> None:
        if self.state.cuts:
            self.apply(links.HealLinks())
        for spu in self.spus:
            if not self.state.spus[spu]:
                self.apply(SpuOnline(spu))
        for _ in range(50):
            while self.notices:
                self.deliver_notice(True)
            while self.responses:
                self.apply(self.responses.pop(0))
            while self.timers and not self.notices:
                self.apply(self.timers.pop(0))
            self.apply(ReconcileElections())
            # A pass with every loop running: elections proposed by an earlier pass have no
            # message in the queues, only their deadline in the state.
            self.now += self.state.election_timeout_ms
            actions = run_elections(self.state, self.now)
            self.checker.check(self.state, actions)
            self.report.acked_all += self.checker.observe(self.state, actions)
            if not (self.notices or self.responses):
                break
        for i in range(8):
            self.apply(ReplicationTick(self.now))
            if i and not any(rs.move for rs in self.state.replica_sets.values()):
                break
        self._check_converged()

    def _check_converged(self) -> None:
        for rs in map(self.state.steady.view, self.state.replica_sets.values()):
            if rs.resolution is not Resolution.ONLINE:
                raise InvariantViolation(f"{rs.key} still {rs.resolution.value} after heal")
            if rs.move is not None:
                raise InvariantViolation(f"{rs.key} move {rs.move} still in flight after heal")
            lead = rs.replica[rs.leader]
            if rs.hw != lead.leo or any(not _same_log(r, lead) for r in rs.replica.values()):
                raise InvariantViolation(f"{rs.key} replicas did not converge after heal")


def _same_log(r: Replica, lead: Replica) -> bool:
    """Same LEO and records; one that kept an uncompacted prefix (compaction leaves a
    diverged replica alone until it rejoins) may start lower."""
    first = max(r.start, lead.start)
    return r.leo == lead.leo and r.records(first, r.leo) == lead.records(first, lead.leo)


def run_schedule(seed: int, *, steps: int | None = None,
                 out: Callable[[str], None] | None = None) -> ScheduleReport:
    """Play one seeded schedule; raise InvariantViolation naming the seed on failure."""
    run = _Run(seed, out)
    n = steps if steps is not None else run.rng.randint(30, 80)
    i = -1
    try:
        for i in range(n):
            run.step()
            run.elections_pass()
        i = n
        run.heal()
    except InvariantViolation as exc:
        recent = "\n  ".join(map(str, run.recent))
        raise InvariantViolation(
            f"seed={seed} step={i}: {exc}\n"
            f"replay: cluster.testing.faults.replay({seed})\n"
            f"last events:\n  {recent}") from exc
    run.report.steps = n
    return run.report


def replay(seed: int, *, steps: int | None = None,
           out: Callable[[str], None] = print) -> ScheduleReport:
    """Re-run a schedule printing each event and its actions."""
    return run_schedule(seed, steps=steps, out=out)


def run_many(count: int, *, first_seed: int = 0,
             budget_s: float | None = None) -> FaultTotals:
    totals = FaultTotals()
    start = time.perf_counter()
    for seed in range(first_seed, first_seed + count):
        totals.add(run_schedule(seed))
        if budget_s is not None and time.perf_counter() - start > budget_s:
            break
    totals.seconds = time.perf_counter() - start
    return totals
