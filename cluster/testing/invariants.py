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
* a COMMITTED read never goes past HW and only returns committed records;
* the replica set is valid at every step: unique non-empty replicas, one state
  per replica, LRS a non-empty subset, leader a replica, the SPU index in step,
  and during a move the replicas are exactly original + target;
* a move takes the LRS below min_lrs never: when replicas that were in the LRS
  are dropped, at least min_lrs of the LRS the step started from remain;
* an unclean election (``UncleanLeaderElected``) is accepted only where it was
  allowed -- the topic's setting, or an override announced with
  ``allow_unclean`` -- and only for exactly the offsets it reports as lost;
  the committed log is then cut there and every other rule applies as before;
* at most one leader per leader epoch is ever accepted by the SC (a deposed
  leader that goes on writing does so under its old epoch, fenced by the newer);
* an acks=1 acknowledgement is either committed later or, when the replica
  that acknowledged it cuts it (a deposed or crashed leader rejoining), that
  cut reports the record: truncations reported equal truncations made;
* a replica that missed a leader epoch (deaf to the SC, ``ReplicaSet.unaware``)
  is not the leader, knows no newer epoch than the set's, and is forgotten as
  soon as it hears the SC again: no replica stays behind once healed.

This is stronger than 004's guarantee ("not lost while one in-sync replica
survives"): logs are durable across SPU restarts here and elections never leave
the LRS, so committed records are never lost at all. A checker for the weaker
property would pass whenever this one does.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Sequence

from cluster.core.replication.events import (Action, RecordsAcknowledged, ReplicaTruncated,
                                             UncleanLeaderElected)
from cluster.core.replication.produce import ConsumeResult
from cluster.core.replication.reach import hears_controller
from cluster.core.replication.state import (COMPACTED, Acks, ClusterState, Key, ReplicaSet,
                                            Resolution)


class InvariantViolation(AssertionError):
    pass


@dataclass
class _Track:
    committed: list[int] = field(default_factory=list)
    acked: dict[int, int] = field(default_factory=dict)
    last_hw: int = 0
    epoch: int = -1
    leader_leo: int = 0
    replicas: list[int] = field(default_factory=list)
    lrs: list[int] = field(default_factory=list)
    leader: int | None = None
    leaders: dict[int, int] = field(default_factory=dict)  # epoch -> the SC's leader
    # acks=1 records not yet committed: (acknowledging SPU, offset, record id).
    at_risk: list[tuple[int, int, int]] = field(default_factory=list)
    seen: bool = False  # checked once at least: its HW so far is known


def _fail(rs: ReplicaSet, msg: str) -> None:
    raise InvariantViolation(f"{rs.topic}/{rs.partition}: {msg}")


class InvariantChecker:
    def __init__(self) -> None:
        self.tracks: dict[Key, _Track] = {}
        self.unclean_allowed: set[Key] = set()

    def allow_unclean(self, key: Key) -> None:
        """An operator override for this partition is about to be applied."""
        self.unclean_allowed.add(key)

    def forget(self, topic: str) -> None:
        """The topic was dropped: a set made again under its name starts a new history."""
        self.tracks = {k: t for k, t in self.tracks.items() if k[0] != topic}
        self.unclean_allowed = {k for k in self.unclean_allowed if k[0] != topic}

    def check(self, state: ClusterState, actions: Iterable[Action] = ()) -> None:
        """Check every set; ``actions`` are the step's, for the unclean elections in it."""
        actions = actions if isinstance(actions, (list, tuple)) else list(actions)
        self._note_unclean(state, actions)
        view = state.steady.view  # a steady set's followers as the index keeps them
        for key, rs in state.replica_sets.items():
            rs = view(rs)
            t = self.tracks.get(key)
            if t is None:
                t = self.tracks[key] = _Track()
            if rs.replicas != t.replicas:
                # The list only changes when a move starts or ends: check it then.
                self._valid_replicas(state, rs)
                self._valid_lrs(rs)
                self._moves(state, rs, t)
            if rs.lrs != t.lrs:
                self._valid_lrs(rs)
                t.lrs = list(rs.lrs)
            self._leaders(state, rs)
            self._hw(rs, t)
            self._logs(state, rs, t)
            if rs.resolution is Resolution.ONLINE:
                self._leader_log(rs, t)
            if t.at_risk:
                self._truncations(rs, t, actions)
            if rs.unaware:
                self._unaware(state, rs)

    @staticmethod
    def _unaware(state: ClusterState, rs: ReplicaSet) -> None:
        for spu, epoch in rs.unaware.items():
            # (<=: an SPU back up while deaf is held at the epoch of its return.)
            if spu == rs.leader or epoch > rs.epoch:
                _fail(rs, f"SPU {spu} is held unaware at epoch {epoch} of a set at "
                          f"{rs.epoch} led by {rs.leader}")
            if hears_controller(state, spu):
                _fail(rs, f"SPU {spu} hears the SC again but was never told epoch {rs.epoch}")

    @staticmethod
    def _reported(rs: ReplicaSet, spu: int, actions: Sequence[Action]) -> set[int]:
        return {rid for a in actions if isinstance(a, ReplicaTruncated)
                and (a.topic, a.partition, a.spu) == (rs.topic, rs.partition, spu)
                for rid in a.records}

    def _truncations(self, rs: ReplicaSet, t: _Track, actions: Sequence[Action]) -> None:
        """An acks=1 record leaves the replica that acknowledged it only with a report."""
        c, keep = t.committed, []
        for spu, o, rid in t.at_risk:
            r = rs.replica.get(spu)
            if (o < len(c) and c[o] == rid) or r is None:
                continue  # committed (safe for good), or its replica moved away
            if r.start <= o < r.leo and r.log[o - r.start] == rid:
                keep.append((spu, o, rid))
            elif rid not in self._reported(rs, spu, actions):
                _fail(rs, f"acks=1 record {rid} at offset {o} left SPU {spu} "
                          f"without a truncation report")
        t.at_risk = keep

    def _note_unclean(self, state: ClusterState, actions: Iterable[Action]) -> None:
        for a in actions:
            if isinstance(a, UncleanLeaderElected):
                self._unclean(state, a)
        self.unclean_allowed.clear()

    def _unclean(self, state: ClusterState, a: UncleanLeaderElected) -> None:
        rs = state.steady.view(state.replica_sets[(a.topic, a.partition)])
        t = self.tracks[rs.key]
        if not (state.topics[a.topic].unclean_leader_election or rs.key in self.unclean_allowed):
            _fail(rs, f"unclean election of SPU {a.spu} that nothing allowed")
        if a.old_hw != t.last_hw or a.new_hw > a.old_hw or a.offsets_lost != a.old_hw - a.new_hw:
            _fail(rs, f"unclean election reports HW {a.old_hw} -> {a.new_hw}, "
                      f"{a.offsets_lost} lost, but the HW was {t.last_hw}")
        del t.committed[a.new_hw:]
        t.acked = {o: rid for o, rid in t.acked.items() if o < a.new_hw}
        t.last_hw, t.epoch = a.new_hw, -1

    def _valid_replicas(self, state: ClusterState, rs: ReplicaSet) -> None:
        reps = rs.replicas
        if not reps or len(set(reps)) != len(reps) or set(rs.replica) != set(reps):
            _fail(rs, f"invalid replica list {reps} (states for {sorted(rs.replica)})")
        indexed = [s for s in state.spus if rs.key in state.keys_of(s)]
        if sorted(indexed) != sorted(reps):
            _fail(rs, f"SPU index lists the set on {sorted(indexed)}, replicas are {reps}")
        m = rs.move
        if m is not None and (set(reps) != set(m.original) | set(m.target)
                              or len(m.target) < state.topics[rs.topic].min_lrs):
            _fail(rs, f"replicas {reps} during a move {m.original} -> {m.target}")

    def _valid_lrs(self, rs: ReplicaSet) -> None:
        lrs, states = rs.lrs, rs.replica
        if not lrs or len(set(lrs)) != len(lrs) or any(s not in states for s in lrs):
            _fail(rs, f"LRS {lrs} is not a non-empty subset of the replicas {rs.replicas}")

    def _moves(self, state: ClusterState, rs: ReplicaSet, t: _Track) -> None:
        dropped = [s for s in t.replicas if s not in rs.replicas]
        dropped_lrs = [s for s in dropped if s in t.lrs]
        kept = len(t.lrs) - len(dropped_lrs)
        if dropped_lrs and kept < state.topics[rs.topic].min_lrs:
            _fail(rs, f"replicas {dropped} dropped from LRS {t.lrs}: {kept} left, "
                      f"below min_lrs {state.topics[rs.topic].min_lrs}")
        t.replicas = list(rs.replicas)

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
            source = rs.leader
            if source is None and not t.seen:
                # First seen leaderless with a HW (a checker begun after a loss restored it
                # while its SPUs are down): what is committed so far is what the replica
                # holding the most of it says, not an advance.
                source = max(rs.replicas, key=lambda s: rs.replica[s].leo)
            if source is None:
                _fail(rs, "HW advanced without a leader")
            c.extend(rs.replica[source].records(len(c), rs.hw))
            if len(c) != rs.hw:
                _fail(rs, f"HW {rs.hw} is past the leader's LEO")
        t.seen = True
        if rs.leader is not None and rs.replica[rs.leader].hw != rs.hw:
            _fail(rs, f"leader HW {rs.replica[rs.leader].hw} != set HW {rs.hw}")

    def _logs(self, state: ClusterState, rs: ReplicaSet, t: _Track) -> None:
        c = t.committed
        for s in rs.replicas:
            in_lrs = s in rs.lrs
            if not (in_lrs or state.spus[s]):
                continue
            r = rs.replica[s]
            if in_lrs and r.leo < len(c):
                _fail(rs, f"LRS member {s} lost committed records: LEO {r.leo} < HW {len(c)}")
            # Compacted offsets were committed and are gone on purpose (retention).
            n = min(r.leo, len(c))
            first = min(r.start, n)
            log = r.log[:n - first]
            if log != c[first:n]:
                at = next(i for i in range(len(log)) if log[i] != c[first + i])
                _fail(rs, f"replica {s} has record {log[at]} at committed offset "
                          f"{first + at}, committed was {c[first + at]}")

    def _leader_log(self, rs: ReplicaSet, t: _Track) -> None:
        leader = rs.replica[rs.leader]
        leo = leader.leo
        if rs.epoch != t.epoch or rs.leader != t.leader:
            t.epoch, t.leader = rs.epoch, rs.leader
            first = t.leaders.setdefault(rs.epoch, rs.leader)
            if first != rs.leader:
                _fail(rs, f"epoch {rs.epoch} accepted two leaders: SPU {first} "
                          f"and SPU {rs.leader}")
            for o, rid in t.acked.items():
                if o >= leo or (o >= leader.start and leader.at(o) != rid):
                    _fail(rs, f"acknowledged record {rid} at offset {o} lost by leader {rs.leader}")
        elif leo < t.leader_leo:
            _fail(rs, f"leader {rs.leader} truncated its log {t.leader_leo} -> {leo}")
        t.leader_leo = leo

    def observe(self, state: ClusterState, actions: Iterable[Action]) -> int:
        """Record acks=all acknowledgements (call after check); returns how many."""
        n = 0
        for a in actions:
            if isinstance(a, RecordsAcknowledged) and a.acks is Acks.ALL:
                rs = state.steady.view(state.replica_sets[(a.topic, a.partition)])
                self._acked(state, rs, a)
                n += len(a.records)
            elif isinstance(a, RecordsAcknowledged) and a.acks is Acks.LEADER:
                rs = state.replica_sets[(a.topic, a.partition)]
                spu = a.spu if a.spu is not None else rs.leader
                self.tracks[rs.key].at_risk += [(spu, o, rid) for o, rid in a.records]
        return n

    def _acked(self, state: ClusterState, rs: ReplicaSet, a: RecordsAcknowledged) -> None:
        t = self.tracks[rs.key]
        lrs = a.lrs or tuple(rs.lrs)
        if len(lrs) < state.topics[rs.topic].min_lrs:
            _fail(rs, f"acks=all acknowledged with LRS {list(lrs)} below min_lrs")
        for o, rid in a.records:
            if o >= len(t.committed) or t.committed[o] != rid:
                _fail(rs, f"record {rid} at offset {o} acknowledged before it was committed")
            t.acked[o] = rid

    def check_consumed(self, rs: ReplicaSet, result: ConsumeResult) -> None:
        c = self.tracks[rs.key].committed
        end = result.next_offset
        if end > rs.hw:
            _fail(rs, f"COMMITTED read reached offset {end - 1} past HW {rs.hw}")
        expected = c[result.start_offset:end]
        if len(result.records) != len(expected) or any(
                rid != COMPACTED and rid != want for rid, want in zip(result.records, expected)):
            _fail(rs, f"COMMITTED read returned uncommitted records at {result.start_offset}")
