"""Partition reassignment the way Kafka does it (``kafka-reassign-partitions``).

``start_move`` keeps the current replicas and adds the target's new ones as
followers outside the LRS; they fetch like any follower and join the LRS once
caught up (sync's rule: LEO >= HW, within the lag limits). ``advance_move``,
run at the start of every tick and fetch of a moving set, then:

1. waits while the set has no leader (a failed leader goes through the normal
   election first), while a target replica outside the LRS is on an offline SPU
   (new or kept) or cannot fetch from the leader (a network cut), and while a
   completion cannot move leadership into the target: whatever it waits on, past
   the move's timeout it rolls back instead;
2. once every target replica is in the LRS, moves leadership to target[0] if
   the leader is not a target replica (or the move asked for the preferred
   leader), then drops the replicas the target does not name.

A rollback (cancel or timeout) goes back to the original list the same way:
leadership moves to a live original LRS member first if a new replica leads,
and the new replicas are dropped only if that leaves at least min_lrs LRS
members, or if none of them is in the LRS. Where that is not yet safe but
every target replica is in the LRS, the move finishes forward instead (the
issue's "finishes or rolls back"); otherwise it waits for the original
replicas to catch up, for one more timeout at most (a cancel's rollback counts from
the cancel; one the timeout began must end now). Then the move is ended where it
stands (``_force_end``): at the original list or the target, whichever drops no
more LRS members than the minimum allows and keeps a live LRS member leading, else
with every replica kept (original and new: nothing dropped). So every move ends,
a move never takes the LRS below the topic's minimum, and only live LRS members
ever lead (no committed record lost).

Decisions are taken before the tick's fetches, on the state the last step
left, so a checker that looks between steps sees exactly what they were
based on. Records are counted, not bytes: a shell multiplies by its record
size for ``bytes_moved``.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

from .compaction import reference_replica
from .events import (Action, LrsChanged, MoveCompleted, MoveProgressed,
                     MoveRolledBack, MoveStarted, ReplicasChanged)
from .leadership import transfer_leadership
from .reach import fetch_cut
from .state import (DEFAULT_MOVE_TIMEOUT_MS, ClusterState, MovePhase,
                    Reassignment, Replica, ReplicaSet, ReplicationError,
                    Resolution)
from .sync import leader_update


class MoveProgress(NamedTuple):
    topic: str
    partition: int
    phase: MovePhase
    original: tuple[int, ...]
    target: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]
    caught_up: tuple[int, ...]  # new replicas already in the LRS
    waiting_for: tuple[int, ...]  # new replicas whose SPU is offline
    records_copied: int
    records_total: int


def _validated_target(state: ClusterState, rs: ReplicaSet, target: Sequence[int]) -> list[int]:
    out = [int(s) for s in target]
    where = f"{rs.topic}/{rs.partition}"
    if rs.move is not None:
        raise ReplicationError(f"{where}: a reassignment is already in flight")
    if not out or len(set(out)) != len(out):
        raise ReplicationError(f"{where}: target replicas must be non-empty and unique")
    unknown = [s for s in out if s not in state.spus]
    if unknown:
        raise ReplicationError(f"{where}: unknown SPU(s) {unknown}")
    min_lrs = state.topics[rs.topic].min_lrs
    if len(out) < min_lrs:
        raise ReplicationError(f"{where}: target has {len(out)} replicas, "
                               f"fewer than the topic's min_lrs {min_lrs}")
    return out


def start_move(state: ClusterState, topic: str, partition: int, target: Sequence[int], *,
               elect_preferred: bool = False,
               timeout_ms: int | None = DEFAULT_MOVE_TIMEOUT_MS,
               now_ms: int | None = None) -> list[Action]:
    """Begin moving to ``target``; a target equal to the current list is a no-op."""
    rs = state.replica_set(topic, partition)
    goal = _validated_target(state, rs, target)
    if goal == rs.replicas:
        return []
    move = Reassignment(list(rs.replicas), goal, elect_preferred, timeout_ms, now_ms)
    for s in move.adding:
        rs.replica[s] = Replica(s, seen_attempt=rs.attempt)
        state.index_add(rs.key, s)
    rs.replicas = move.original + move.adding
    rs.move = move
    return [MoveStarted(topic, partition, tuple(move.original), tuple(goal)),
            _replicas_changed(rs)]


def _replicas_changed(rs: ReplicaSet) -> ReplicasChanged:
    m = rs.move
    adding = () if m is None else tuple(m.adding)
    removing = () if m is None else tuple(m.removing)
    return ReplicasChanged(rs.topic, rs.partition, tuple(rs.replicas), adding, removing)


def cancel_move(state: ClusterState, topic: str, partition: int) -> list[Action]:
    """Stop the move and go back to the original list (now, or once that is safe)."""
    rs = state.replica_set(topic, partition)
    if rs.move is None:
        raise ReplicationError(f"{topic}/{partition}: no reassignment in flight")
    if rs.move.rolling_back:
        return []
    _begin_rollback(rs.move, "cancelled")
    return advance_move(state, rs)


def _begin_rollback(move: Reassignment, reason: str, now_ms: int | None = None) -> None:
    # The rollback's own clock: it may wait for the original replicas one timeout more.
    move.rolling_back, move.reason, move.stalled_ms = True, reason, now_ms


def advance_moves(state: ClusterState, now_ms: int | None = None) -> list[Action]:
    actions: list[Action] = []
    for rs in state.unsteady_sets():
        if rs.move is not None:
            actions += advance_move(state, rs, now_ms)
    return actions


def advance_move(state: ClusterState, rs: ReplicaSet, now_ms: int | None = None) -> list[Action]:
    """One decision for one moving set (see the module docstring)."""
    move = rs.move
    if move is None:
        return []
    timed_out = _check_stall(state, rs, move, now_ms)
    actions: list[Action] = []
    if rs.resolution is Resolution.ONLINE:
        if move.rolling_back:
            actions += _roll_back(state, rs)
        if rs.move is not None:
            # A rollback that would cost LRS members may still finish forward safely.
            actions += _complete(state, rs)
    if rs.move is not None and timed_out:
        actions += _force_end(state, rs, rs.move)
    if rs.move is not None:
        actions += _report(state, rs, rs.move)
    return actions


def waiting_on(state: ClusterState, rs: ReplicaSet, move: Reassignment) -> str | None:
    """What keeps a move from going on by itself (None while it copies or can finish)."""
    if move.rolling_back:
        return f"rolling back ({move.reason})"
    if rs.resolution is not Resolution.ONLINE or rs.leader is None:
        return "the partition has no leader"
    outside = [s for s in move.target if s not in rs.lrs]
    if not outside:
        # Finishes on this very step unless leadership cannot move into the target.
        return "leadership cannot move to a target replica"
    cut = fetch_cut(state) if state.cuts else frozenset()
    for s in outside:
        role = "new" if s in move.adding else "kept"
        if not state.spus.get(s):
            return f"{role} replica SPU {s} offline"
        if (s, rs.leader) in cut:
            return f"{role} replica SPU {s} cut from leader SPU {rs.leader}"
    return None


def _check_stall(state: ClusterState, rs: ReplicaSet, move: Reassignment,
                 now_ms: int | None) -> bool:
    """Runs the timeout's clock while the move waits; True when a rollback's time is up
    (the move must end on this step). Past the timeout a move that waits rolls back."""
    why = waiting_on(state, rs, move)
    if why is None:
        move.stalled_ms = None
        return False
    if now_ms is None or move.timeout_ms is None:
        return False
    if move.stalled_ms is None:
        move.stalled_ms = now_ms
        return False
    waited = now_ms - move.stalled_ms
    if waited < move.timeout_ms:
        return False
    if move.rolling_back:
        move.reason = f"{move.reason}; the rollback waited {waited} ms"
        return True
    _begin_rollback(move, f"{why} for {waited} ms (timeout {move.timeout_ms} ms)", now_ms)
    return True  # the timeout is spent: roll back now, or end the move where it stands


def _force_end(state: ClusterState, rs: ReplicaSet, move: Reassignment) -> list[Action]:
    """End a move whose time is up and that neither rolls back nor completes by the rules:
    at the original list or the target where that is safe, else keeping every replica."""
    for final, dropped in ((move.original, move.adding), (move.target, move.removing)):
        if rs.resolution is Resolution.ONLINE:
            if not _safe_to_drop(state, rs, dropped):
                continue
            actions = _lead_from(state, rs, final, None)
            if actions is None:
                continue
        elif any(s in rs.lrs or s in (rs.candidate, rs.leader) for s in dropped):
            continue  # an election among the LRS: none of its members is dropped
        else:
            actions = []
        reason = move.reason
        actions += _finish(state, rs, final)
        if final == move.target:
            return actions + [MoveCompleted(rs.topic, rs.partition, tuple(rs.replicas),
                                            rs.leader)]
        return actions + [MoveRolledBack(rs.topic, rs.partition, tuple(rs.replicas), reason)]
    # Neither end is safe: the move ends with every replica kept (none dropped, none lost).
    reason = f"{move.reason}; ended keeping every replica (dropping any was unsafe)"
    actions = _finish(state, rs, list(rs.replicas))
    return actions + [MoveRolledBack(rs.topic, rs.partition, tuple(rs.replicas), reason)]


def _lead_from(state: ClusterState, rs: ReplicaSet, allowed: list[int],
               preferred: int | None) -> list[Action] | None:
    """Leadership inside ``allowed`` ([] when already), or None when no member can take it."""
    if rs.leader in allowed and (preferred is None or rs.leader == preferred):
        return []
    live = [s for s in allowed if s in rs.lrs and state.spus[s]]
    if preferred in live:
        choice = preferred
    elif rs.leader in allowed:
        return []
    elif live:
        choice = live[0]
    else:
        return None
    return transfer_leadership(state, rs, choice, "reassignment")


def _complete(state: ClusterState, rs: ReplicaSet) -> list[Action]:
    move = rs.move
    if not all(s in rs.lrs for s in move.target):
        return []
    leaving = rs.leader not in move.target
    want = move.target[0] if move.elect_preferred or leaving else None
    actions = _lead_from(state, rs, move.target, want)
    if actions is None or not all(s in rs.lrs for s in move.target):
        return actions or []
    actions += _finish(state, rs, move.target)
    actions.append(MoveCompleted(rs.topic, rs.partition, tuple(rs.replicas), rs.leader))
    return actions


def _roll_back(state: ClusterState, rs: ReplicaSet) -> list[Action]:
    move = rs.move
    # Judged on the LRS before any leader move: a move may grow the LRS, never shrink it.
    if not _safe_to_drop(state, rs, move.adding):
        return []
    actions = _lead_from(state, rs, move.original, None)
    if actions is None:
        return []
    actions += _finish(state, rs, move.original)
    actions.append(MoveRolledBack(rs.topic, rs.partition, tuple(rs.replicas), move.reason))
    return actions


def _safe_to_drop(state: ClusterState, rs: ReplicaSet, dropped: list[int]) -> bool:
    """Dropping LRS members must leave at least the topic's min_lrs in the LRS."""
    in_lrs = sum(s in rs.lrs for s in dropped)
    return in_lrs == 0 or len(rs.lrs) - in_lrs >= state.topics[rs.topic].min_lrs


def _finish(state: ClusterState, rs: ReplicaSet, final: list[int]) -> list[Action]:
    for s in rs.replicas:
        if s not in final:
            del rs.replica[s]
            state.index_remove(rs.key, s)
    rs.replicas = list(final)
    rs.lrs = [s for s in final if s in rs.lrs]
    rs.tried = [s for s in rs.tried if s in final]
    rs.move = None
    actions: list[Action] = [_replicas_changed(rs)]
    if rs.leader is None:  # a forced end while the set elects: its LRS only loses no one
        return actions + [LrsChanged(rs.topic, rs.partition, rs.leader, tuple(rs.lrs), rs.hw)]
    # A dropped lagging LRS member no longer holds HW back.
    actions += [a for a in leader_update(state, rs) if not isinstance(a, LrsChanged)]
    actions.append(LrsChanged(rs.topic, rs.partition, rs.leader, tuple(rs.lrs), rs.hw))
    return actions


def _phase(state: ClusterState, rs: ReplicaSet, move: Reassignment) -> MovePhase:
    if move.rolling_back:
        return MovePhase.ROLLING_BACK
    if rs.resolution is not Resolution.ONLINE:
        return MovePhase.ELECTING
    if waiting_on(state, rs, move) is not None:
        return MovePhase.STALLED
    return MovePhase.CATCHING_UP


def move_progress(state: ClusterState, rs: ReplicaSet) -> MoveProgress | None:
    """How far the set's move has come (None when no move is in flight)."""
    move = rs.move
    if move is None:
        return None
    adding = move.adding
    leo = reference_replica(rs).leo
    copied = sum(min(rs.replica[s].leo, leo) for s in adding)
    return MoveProgress(
        rs.topic, rs.partition, _phase(state, rs, move), tuple(move.original),
        tuple(move.target), tuple(adding), tuple(move.removing),
        tuple(s for s in adding if s in rs.lrs),
        tuple(s for s in adding if not state.spus[s]), copied, leo * len(adding))


def moves_in_flight(state: ClusterState) -> list[MoveProgress]:
    return [move_progress(state, state.replica_sets[k])
            for k in sorted(state.replica_sets) if state.replica_sets[k].move is not None]


def _report(state: ClusterState, rs: ReplicaSet, move: Reassignment) -> list[Action]:
    phase = _phase(state, rs, move)
    caught_up = [s for s in move.adding if s in rs.lrs]
    if phase is move.phase and caught_up == move.caught_up:
        return []
    move.phase, move.caught_up = phase, caught_up
    p = move_progress(state, rs)
    return [MoveProgressed(rs.topic, rs.partition, phase, p.caught_up,
                           p.records_copied, p.records_total)]
