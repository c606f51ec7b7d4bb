"""Replica election (001), with the choices 001 leaves open made safe.

SC side: an SPU going offline sends every replica set it led to Election; the
candidate is the live LRS follower with the smallest lag (largest LEO, ties by
assignment order); CandidateFound + NotifyCandidate + StartElectionTimer; a
PromotionSucceeded for the current attempt makes the set Online; a TimerFired
for the current attempt tries the next LRS follower; none left -> Offline. An
SPU coming back online re-runs the election of the Offline sets it belongs to.

Where 001 as written would break 004's guarantee ("a committed record is not
lost while one LRS member survives") or one-leader-at-a-time, this module
takes the safe reading and says so:

* A genuine break found by the fault schedules (seed 5775): 001 makes the set
  Online when "Promotion Successful" arrives from the candidate. If the
  candidate crashes after sending it, it leaves the LRS, restarts and truncates
  like any rejoining replica; the report, still in flight, then arrives with the
  right attempt number and would install a leader missing committed records
  while a live LRS member still has them. So the SC accepts a report only from
  a candidate that is still a live LRS member (``is_eligible``).
* Only LRS members are ever candidates, also when an Offline set is retried
  after an SPU returns (001 says "follower membership list" there), except
  while the set has no committed record (HW 0) and no live LRS member: then
  nothing can be lost. Electing a
  replica outside the LRS loses committed records: LRS {A, B}, C lagging;
  record r committed on A and B; A and B go down, C returns -> C would lead
  without r, and A and B would cut r when they follow C. 004 promises nothing
  once every in-sync replica is down, but losing r silently is avoidable: the
  set stays Offline until an LRS member is back (Kafka's
  unclean.leader.election=false). The cost is availability.
* The LRS is never emptied by SPUs going offline: the last member stays, dead,
  so the SC still knows who holds every committed record (Kafka keeps the last
  ISR member for the same reason). Only its return can bring the set back.
* A returning replica that is not in the LRS truncates to its own HW (001's
  "failed leader rejoins": its uncommitted records vanish, committed ones are
  below its HW and stay) and then to the point where it diverges from the
  leader. A live LRS follower is NOT truncated to its own HW on a leader
  change, because a follower's HW lags the leader's and truncating to it would
  drop committed records from an LRS member (Kafka's KIP-101 data loss); it is
  cut only where it diverges from the new leader, which is never below HW.
* The new leader starts from the set's HW, so HW never moves backwards, not
  even across leader changes (every LRS member has LEO >= HW).
* Pending acks=all records fail with LEADER_LOST when the leader goes; the
  producer may retry (it will not be told "acknowledged" for a record whose
  fate is unknown).
* 001 lets non-candidate SPUs ignore a candidate notice; here they step down if
  they had promoted themselves under an older attempt, and an SPU ignores
  notices older than the newest it saw. Otherwise a slow candidate whose timer
  fired and the next candidate could both act as leader.
* Unclean election (``unclean``) is the one way past the clean rule: when the
  topic allows it or an operator forces it, and no LRS member is live, the
  live replica with the longest log leads and the offsets it lacks are given up.
  Like preferred-leader moves (``leadership``), it is an SC decision installed
  directly, as Kafka's controller writes LeaderAndIsr; only failover elections
  use 001's notice / timer protocol.
* 001 only retries Offline sets when an SPU returns; a set whose candidates all
  failed while alive would stay Offline for ever, so ReconcileElections (the
  shell's periodic beat) retries Offline sets that have a live LRS member.
"""
from __future__ import annotations

from .acks import fail_pending
from .events import (LEADER_LOST, Action, LeaderChanged, LrsChanged,
                     NotifyCandidate, PromotionFailed, PromotionSucceeded,
                     ResolutionChanged, StartElectionTimer, TimerFired,
                     UncleanLeaderElected)
from .connections import drop_connections
from .reach import hears_controller
from .state import (ClusterState, ReplicaSet, ReplicationError, Resolution)
from .sync import align_with_leader, leader_update, truncate
from .unclean import give_up_records, unclean_candidate

ONLINE, ELECTION = Resolution.ONLINE, Resolution.ELECTION
CANDIDATE_FOUND, OFFLINE = Resolution.CANDIDATE_FOUND, Resolution.OFFLINE


def _set_resolution(rs: ReplicaSet, new: Resolution, reason: str) -> list[Action]:
    old = rs.resolution
    if old is new:
        return []
    rs.resolution = new
    return [ResolutionChanged(rs.topic, rs.partition, old, new, reason)]


def _lrs_changed(rs: ReplicaSet) -> LrsChanged:
    return LrsChanged(rs.topic, rs.partition, rs.leader, tuple(rs.lrs), rs.hw)


def is_eligible(rs: ReplicaSet, spu: int, spus: dict[int, bool]) -> bool:
    """Only a live LRS member may lead: it is known to hold every committed record.

    While nothing is committed (HW 0) and no LRS member is live, any live
    replica holds all of it: a partition created while its first replica was
    down may start on any other.
    """
    if not spus.get(spu):
        return False
    return spu in rs.lrs or (rs.hw == 0 and not any(spus.get(s) for s in rs.lrs))


def choose_candidate(rs: ReplicaSet, spus: dict[int, bool]) -> int | None:
    """Eligible follower not yet tried in this election with the smallest lag."""
    live = [s for s in rs.replicas
            if s != rs.leader and s not in rs.tried and is_eligible(rs, s, spus)]
    if not live:
        return None
    # min() keeps the first of equals: assignment order breaks ties.
    return min(live, key=lambda s: -rs.replica[s].leo)


def start_election(state: ClusterState, rs: ReplicaSet, reason: str) -> list[Action]:
    rs.tried = []
    rs.candidate = None
    return _set_resolution(rs, ELECTION, reason) + _propose_next(state, rs)


def _propose_next(state: ClusterState, rs: ReplicaSet) -> list[Action]:
    candidate = choose_candidate(rs, state.spus)
    if candidate is None:
        rs.candidate, rs.deadline_ms = None, None
        if _unclean_allowed(state, rs):
            return elect_unclean(state, rs, unclean_candidate(rs, state.spus), forced=False)
        return _set_resolution(rs, OFFLINE, "no eligible leader candidate in the LRS")
    return _propose(state, rs, candidate)


def _unclean_allowed(state: ClusterState, rs: ReplicaSet) -> bool:
    return (state.topics[rs.topic].unclean_leader_election
            and not any(state.spus.get(s) for s in rs.lrs)
            and unclean_candidate(rs, state.spus) is not None)


def elect_unclean(state: ClusterState, rs: ReplicaSet, spu: int, *,
                  forced: bool) -> list[Action]:
    """Install a live replica outside the LRS as leader, giving up what it lacks."""
    old_hw = rs.hw
    actions = fail_pending(rs, LEADER_LOST, f"unclean election of SPU {spu}")
    new_hw = give_up_records(rs, spu)
    # A new attempt makes every notice and timer of the clean election stale.
    rs.attempt += 1
    actions.append(UncleanLeaderElected(rs.topic, rs.partition, spu, old_hw, new_hw,
                                        old_hw - new_hw, forced))
    return actions + install_leader(state, rs, spu)


def force_unclean(state: ClusterState, topic: str, partition: int,
                  spu: int | None = None) -> list[Action]:
    """Operator override for one leaderless partition, whatever the topic's setting."""
    rs = state.replica_set(topic, partition)
    if rs.resolution is ONLINE:
        raise ReplicationError(f"{topic}/{partition} already has leader SPU {rs.leader}")
    live_lrs = [s for s in rs.lrs if state.spus.get(s)]
    if live_lrs:
        raise ReplicationError(f"{topic}/{partition}: LRS member SPU {live_lrs[0]} is live, "
                               "a clean election can run")
    if spu is None:
        spu = unclean_candidate(rs, state.spus)
        if spu is None:
            raise ReplicationError(f"{topic}/{partition}: no replica is live")
    elif spu not in rs.replica or not state.spus.get(spu):
        raise ReplicationError(f"SPU {spu} is not a live replica of {topic}/{partition}")
    return elect_unclean(state, rs, spu, forced=True)


def _propose(state: ClusterState, rs: ReplicaSet, candidate: int) -> list[Action]:
    rs.attempt += 1
    rs.candidate = candidate
    rs.deadline_ms = state.clock_ms + state.election_timeout_ms
    actions = _set_resolution(rs, CANDIDATE_FOUND, f"candidate SPU {candidate}")
    live = tuple(s for s in rs.replicas if state.spus[s])
    actions.append(NotifyCandidate(rs.topic, rs.partition, candidate, rs.attempt, live))
    actions.append(StartElectionTimer(rs.topic, rs.partition, candidate, rs.attempt,
                                      state.election_timeout_ms))
    return actions


def _leave_lrs(rs: ReplicaSet, spu: int) -> bool:
    # The last member stays: it is the only record of who holds the committed log.
    if spu in rs.lrs and len(rs.lrs) > 1:
        rs.lrs.remove(spu)
        return True
    return False


def _leader_lost(state: ClusterState, rs: ReplicaSet) -> list[Action]:
    old = rs.leader
    actions = fail_pending(rs, LEADER_LOST, f"leader SPU {old} went offline before commit")
    rs.leader = None
    actions.append(LeaderChanged(rs.topic, rs.partition, old, None, rs.epoch))
    if _leave_lrs(rs, old):
        actions.append(_lrs_changed(rs))
    return actions + start_election(state, rs, f"leader SPU {old} went offline")


def _follower_lost(state: ClusterState, rs: ReplicaSet, spu: int) -> list[Action]:
    if rs.resolution is ONLINE:
        # The leader's own LRS refresh drops it, and HW may advance (001's example).
        return leader_update(state, rs)
    return [_lrs_changed(rs)] if _leave_lrs(rs, spu) else []


def spu_offline(state: ClusterState, spu: int) -> list[Action]:
    if spu not in state.spus:
        raise ReplicationError(f"unknown SPU {spu}")
    if not state.spus[spu]:
        return []
    state.spus[spu] = False
    drop_connections(state, spu)
    actions: list[Action] = []
    for rs in state.sets_of(spu):
        rs.replica[spu].claims_leadership = False
        if rs.leader == spu:
            actions += _leader_lost(state, rs)
        else:
            actions += _follower_lost(state, rs, spu)
    return actions


def _replica_back(state: ClusterState, rs: ReplicaSet, spu: int) -> list[Action]:
    r = rs.replica[spu]
    # On registering, an SPU learns the SC's current view, so older notices are stale.
    r.claims_leadership = False
    r.seen_attempt = rs.attempt
    if spu in rs.tried:
        rs.tried.remove(spu)
    actions: list[Action] = []
    if spu not in rs.lrs:
        actions += truncate(rs, spu, r.hw, "rejoining: truncated to the HW it had")
        if rs.resolution is ONLINE:
            actions += align_with_leader(rs, spu)
    if rs.resolution is OFFLINE:
        actions += start_election(state, rs, f"SPU {spu} back online")
    elif rs.resolution is CANDIDATE_FOUND and rs.candidate == spu and spu in rs.lrs:
        # Its restart lost any promotion in flight: ask it again under a new attempt.
        actions += _propose(state, rs, spu)
    return actions


def spu_online(state: ClusterState, spu: int) -> list[Action]:
    if spu not in state.spus:
        raise ReplicationError(f"unknown SPU {spu}")
    if state.spus[spu]:
        return []
    state.spus[spu] = True
    actions: list[Action] = []
    for rs in state.sets_of(spu):
        actions += _replica_back(state, rs, spu)
    return actions


def _current(state: ClusterState, topic: str, partition: int, spu: int,
             attempt: int) -> ReplicaSet | None:
    """The replica set if (spu, attempt) is its live proposal, else None (stale)."""
    rs = state.replica_sets.get((topic, partition))
    if (rs is None or rs.resolution is not CANDIDATE_FOUND
            or rs.attempt != attempt or rs.candidate != spu):
        return None
    return rs


def timer_fired(state: ClusterState, ev: TimerFired) -> list[Action]:
    rs = _current(state, ev.topic, ev.partition, ev.candidate, ev.attempt)
    if rs is None:
        return []
    rs.tried.append(ev.candidate)
    return _propose_next(state, rs)


def promotion_failed(state: ClusterState, ev: PromotionFailed) -> list[Action]:
    return timer_fired(state, TimerFired(ev.topic, ev.partition, ev.spu, ev.attempt))


def promotion_succeeded(state: ClusterState, ev: PromotionSucceeded) -> list[Action]:
    rs = _current(state, ev.topic, ev.partition, ev.spu, ev.attempt)
    # A candidate that crashed since the notice left the LRS and may have truncated:
    # its report from before the crash must not make it leader.
    if rs is None or not is_eligible(rs, ev.spu, state.spus):
        return []
    return install_leader(state, rs, ev.spu)


def install_leader(state: ClusterState, rs: ReplicaSet, spu: int,
                   old: int | None = None) -> list[Action]:
    """SC side of a successful promotion: Online, new LRS, followers told."""
    rs.leader, rs.candidate, rs.tried, rs.deadline_ms = spu, None, [], None
    rs.unaware.pop(spu, None)  # whoever the SC installs knows the epoch it starts
    if state.cuts:
        # A running replica that cannot hear the SC is never told of the new epoch: it keeps
        # the one it knew and fetches from nobody until a heal (``links``).
        for s in rs.replicas:
            if s != spu and state.spus[s] and not hears_controller(state, s):
                rs.unaware.setdefault(s, rs.epoch)
    rs.epoch += 1
    for s, r in rs.replica.items():
        r.claims_leadership = s == spu
        r.seen_attempt = rs.attempt
        r.caught_up_ms = None
    rs.replica[spu].hw = rs.hw
    actions: list[Action] = [LeaderChanged(rs.topic, rs.partition, old, spu, rs.epoch)]
    actions += _set_resolution(rs, ONLINE, f"SPU {spu} promoted to leader")
    for s in rs.replicas:
        # A deaf replica too: its divergent tail is cut (and reported) now rather than at
        # the heal, the same records either way (no leader writes to it meanwhile), and the
        # HW never counts a record it holds that the new leader does not.
        if s != spu and state.spus[s]:
            actions += align_with_leader(rs, s)
    rs.lrs = [s for s in rs.lrs if state.spus[s]]
    actions += [a for a in leader_update(state, rs) if not isinstance(a, LrsChanged)]
    actions.append(_lrs_changed(rs))
    return actions


def reconcile_elections(state: ClusterState) -> list[Action]:
    actions: list[Action] = []
    for rs in state.unsteady_sets():
        if rs.resolution is not OFFLINE:
            continue
        if any(is_eligible(rs, s, state.spus) for s in rs.replicas):
            actions += start_election(state, rs, "reconcile: an LRS member is live")
        elif _unclean_allowed(state, rs):
            actions += start_election(state, rs, "reconcile: unclean election allowed")
    return actions


def spu_receive_notice(state: ClusterState, notice: NotifyCandidate, *,
                       succeed: bool = True) -> PromotionSucceeded | None:
    """SPU side: every live SPU of the set gets the notice; the candidate promotes.

    Returns the PromotionSucceeded report to feed back to the SC, or None when
    the promotion failed or the notice was stale (001: no notification).
    """
    rs = state.replica_sets.get((notice.topic, notice.partition))
    if rs is None:
        return None
    state.steady.leave(rs)
    for s in rs.replicas:
        r = rs.replica[s]
        if not state.spus[s] or notice.attempt <= r.seen_attempt:
            continue
        r.seen_attempt = notice.attempt
        if s != notice.candidate:
            r.claims_leadership = False
    c = rs.replica.get(notice.candidate)
    if c is None or not state.spus.get(notice.candidate) or c.seen_attempt != notice.attempt:
        return None
    if not succeed:
        return None
    c.claims_leadership = True
    return PromotionSucceeded(notice.topic, notice.partition, notice.candidate, notice.attempt)
