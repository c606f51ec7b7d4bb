"""Invariant checker for replica sets, used after every step of a fault schedule.

Checked per replica set:
* at most one live SPU acts as leader, and when Online it is the SC's leader,
  live and in the LRS; without Online there is no SC leader;
* HW never moves backwards (on a live leader, and in this design across leader
  changes too), and the leader's own HW is the set's HW;
* the committed log (every record ever below HW, as first seen) never changes:
  each live replica agrees with it on every offset it holds up to HW, and every
  LRS member (live, or the dead last member the SC keeps) holds all of it;
* a leader never truncates its own log;
* an acks=all acknowledgement only comes once the record is committed with at
  least min_lrs LRS members, and the record is in every later leader's log;
* a COMMITTED read never goes past HW and only returns committed records.

This is stronger than 004's guarantee ("not lost while one in-sync replica
survives"): logs are durable across SPU restarts here and elections never leave
the LRS, so committed records are never lost at all. A checker for the weaker
property would pass whenever this one does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from .events import Action, RecordsAcknowledged
from .produce import ConsumeResult
from .state import Acks, ClusterState, Key, ReplicaSet, Resolution


class InvariantViolation(AssertionError):
    pass


@dataclass
class _Track:
    committed: list[int] = field(default_factory=list)
    acked: dict[int, int] = field(default_factory=dict)
    last_hw: int = 0
    epoch: int = -1
    leader_leo: int = 0


def _fail(rs: ReplicaSet, msg: str) -> None:
    raise InvariantViolation(f"{rs.topic}/{rs.partition}: {msg}")


class InvariantChecker:
    def __init__(self) -> None:
        self.tracks: dict[Key, _Track] = {}

    def check(self, state: ClusterState) -> None:
        for rs in state.replica_sets.values():
            t = self.tracks.get(rs.key)
            if t is None:
                t = self.tracks[rs.key] = _Track()
            self._leaders(state, rs)
            self._hw(rs, t)
            self._logs(state, rs, t)
            if rs.resolution is Resolution.ONLINE:
                self._leader_log(rs, t)

    def _leaders(self, state: ClusterState, rs: ReplicaSet) -> None:
        claims = [s for s in rs.replicas if state.spus[s] and rs.replica[s].claims_leadership]
        if len(claims) > 1:
            _fail(rs, f"SPUs {claims} all act as leader")
        if rs.resolution is not Resolution.ONLINE:
            if rs.leader is not None:
                _fail(rs, f"{rs.resolution.value} but SC leader is {rs.leader}")
            return
        if not state.spus[rs.leader] or claims != [rs.leader] or rs.leader not in rs.lrs:
            _fail(rs, f"Online leader {rs.leader} is not a live self-declared LRS member "
                      f"(claims {claims}, lrs {rs.lrs})")

    def _hw(self, rs: ReplicaSet, t: _Track) -> None:
        if rs.hw < t.last_hw:
            _fail(rs, f"HW moved backwards {t.last_hw} -> {rs.hw}")
        t.last_hw = rs.hw
        c = t.committed
        if rs.hw > len(c):
            if rs.leader is None:
                _fail(rs, "HW advanced without a leader")
            c.extend(rs.replica[rs.leader].log[len(c):rs.hw])
            if len(c) != rs.hw:
                _fail(rs, f"HW {rs.hw} is past the leader's LEO")
        if rs.leader is not None and rs.replica[rs.leader].hw != rs.hw:
            _fail(rs, f"leader HW {rs.replica[rs.leader].hw} != set HW {rs.hw}")

    def _logs(self, state: ClusterState, rs: ReplicaSet, t: _Track) -> None:
        c = t.committed
        for s in rs.replicas:
            in_lrs = s in rs.lrs
            if not (in_lrs or state.spus[s]):
                continue
            log = rs.replica[s].log
            if in_lrs and len(log) < len(c):
                _fail(rs, f"LRS member {s} lost committed records: LEO {len(log)} < HW {len(c)}")
            n = min(len(log), len(c))
            if log[:n] != c[:n]:
                at = next(i for i in range(n) if log[i] != c[i])
                _fail(rs, f"replica {s} has record {log[at]} at committed offset {at}, "
                          f"committed was {c[at]}")

    def _leader_log(self, rs: ReplicaSet, t: _Track) -> None:
        log = rs.replica[rs.leader].log
        if rs.epoch != t.epoch:
            t.epoch = rs.epoch
            for o, rid in t.acked.items():
                if o >= len(log) or log[o] != rid:
                    _fail(rs, f"acknowledged record {rid} at offset {o} lost by leader {rs.leader}")
        elif len(log) < t.leader_leo:
            _fail(rs, f"leader {rs.leader} truncated its log {t.leader_leo} -> {len(log)}")
        t.leader_leo = len(log)

    def observe(self, state: ClusterState, actions: Iterable[Action]) -> int:
        """Record acks=all acknowledgements (call after check); returns how many."""
        n = 0
        for a in actions:
            if isinstance(a, RecordsAcknowledged) and a.acks is Acks.ALL:
                rs = state.replica_sets[(a.topic, a.partition)]
                self._acked(state, rs, a)
                n += len(a.records)
        return n

    def _acked(self, state: ClusterState, rs: ReplicaSet, a: RecordsAcknowledged) -> None:
        t = self.tracks[rs.key]
        if len(rs.lrs) < state.topics[rs.topic].min_lrs:
            _fail(rs, f"acks=all acknowledged with LRS {rs.lrs} below min_lrs")
        for o, rid in a.records:
            if o >= len(t.committed) or t.committed[o] != rid:
                _fail(rs, f"record {rid} at offset {o} acknowledged before it was committed")
            t.acked[o] = rid

    def check_consumed(self, rs: ReplicaSet, result: ConsumeResult) -> None:
        c = self.tracks[rs.key].committed
        end = result.next_offset
        if end > rs.hw:
            _fail(rs, f"COMMITTED read reached offset {end - 1} past HW {rs.hw}")
        if list(result.records) != c[result.start_offset:end]:
            _fail(rs, f"COMMITTED read returned uncommitted records at {result.start_offset}")
