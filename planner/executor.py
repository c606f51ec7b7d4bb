"""The plan executor: one step of every live execution, inside each replication tick.

``plan_executor_step`` is one of the engine's tick steps (composition/bootstrap.py)
and runs in the tick's locked load-modify-save: it notes the moves that ended,
starts the next ones the throttles allow (Cruise Control's move counts,
``core.moves_to_start``, then the byte rate, planner/core/execution/throttle.py), sends
cancels, and works out the progress and its pace. The throttles are read from the
execution at every step, so a change of them (``plan_throttle``) applies at the next. It
writes nothing to the database itself: the progress is handed to ``hot.after_commit`` (the
unit of work's own list) and lands only once the
tick's fenced save of the hot state did, so a refused save (the lease lost)
leaves the database saying what the hot state says, and the moves are started
again by a later tick.
"""
from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.utils import timezone

from cluster.core import replication as core
from cluster.core.replication import Action, Key, ReplicationError
from cluster.live import PlanProgress
from cluster.ports import HotState
from cluster.services.events import log_event
from planner.core.execution import (ByteBucket, ExecutionState, Pace, PlanMove, final_state,
                                    finished_move, held_pace, next_pace, refill,
                                    within_byte_rate)
from planner.live import offer_apply_progress
from planner.models import PlanExecution
from planner.running import executing, moves_of
from planner.selectors import execution_record

EXECUTOR = "plan-executor"
S = ExecutionState
# The columns a step may change; compared before and after to skip idle writes.
PROGRESS = ("moves_done", "moves_failed", "bytes_moved", "bytes_copied", "started",
            "in_flight", "cancel_sent", "reason", "landed", "waiting", "throttle_tokens",
            "throttle_at_ms", "pace")


def plan_executor_step(hot: HotState, at: int) -> list[Action]:
    """Note ended moves, start or cancel moves, and hand the progress to after the save."""
    running = [(execution, moves_of(execution.plan_id)) for execution in executing()]
    # Named before any is read: a unit that loaded only some sets (the sharded coordinator's)
    # then loads them all at once. A generator: a whole load asks nothing of it.
    hot.reads(key for e, moves in running for key in _sets_read(hot, e, moves))
    actions: list[Action] = []
    for execution, moves in running:
        actions += _step(hot, execution, moves, at)
    return actions


def _sets_read(hot: HotState, e: PlanExecution, moves: list[PlanMove]) -> Iterator[Key]:
    """The sets a step may read: the moves in flight, and those it may start, chosen next to
    the moves in flight as they stand and as if all of them had ended (a start beyond both,
    once some ended, is read when reached: the coordinator's step unit loads it then)."""
    flying = [moves[i] for i in e.in_flight]
    chosen: list[PlanMove] = []
    if e.state == S.RUNNING.value:
        pending = _pending(e, moves, hot.state.spus)
        # With none in flight the two choices are one: the plan's pending moves are scanned
        # once (a drain's thousands, all loading the drained SPU, are passed over whole).
        for beside in (flying, []) if flying else ([],):
            chosen += core.moves_to_start(pending, beside, max_per_spu=e.max_moves_per_spu,
                                          max_moves=e.max_moves, spus_of=_moved)
    for move in flying + chosen:
        yield move.topic, move.partition


def _moved(move: PlanMove) -> frozenset[int]:
    return move.moved


def _pending(e: PlanExecution, moves: list[PlanMove], spus: dict[int, bool]) -> list[PlanMove]:
    """The moves not started, but those onto an SPU that is down (they would only stall:
    they wait, unstarted, for the SPU)."""
    started, up = set(e.started), _up(spus)
    return [m for m in moves if m.index not in started and up.issuperset(m.added)]


def _up(spus: dict[int, bool]) -> frozenset[int]:
    """The SPUs online: a move's new replicas all among them is one C call, not a generator
    a move (the executor goes over every move not started, three times a tick)."""
    return frozenset(s for s, online in spus.items() if online)


def _step(hot: HotState, e: PlanExecution, moves: list[PlanMove], at: int) -> list[Action]:
    saved = _progress(e)
    shown = _shown(e)
    _note_finished(hot, e, moves, at)
    actions: list[Action] = []
    if e.state == S.RUNNING.value:
        actions += _start_moves(hot, e, moves, at)
    elif e.state == S.CANCELLED.value and not e.cancel_sent:
        actions += _cancel_in_flight(hot, e, moves)
    if e.in_flight:
        e.bytes_copied = e.bytes_moved + _copying(hot, e, moves)
    else:
        e.bytes_copied = e.bytes_moved
    _sample_pace(e, at)
    end = _end_state(e)
    if end is not None or _progress(e) != saved:
        hot.after_commit(lambda: _save(e, end, shown))
    return actions


def _sample_pace(e: PlanExecution, at: int) -> None:
    """A sample of the pace when the counts moved (an idle tick writes nothing); held while
    the plan starts no moves, so a pause does not read as a slow pace after it."""
    pace = Pace.from_dict(e.pace)
    if e.state != S.RUNNING.value:
        new = held_pace(pace, now_ms=at)
    elif pace is None or pace.held or \
            (pace.moves_done, pace.bytes_copied) != (e.moves_done, e.bytes_copied):
        new = next_pace(pace, moves_done=e.moves_done, bytes_copied=e.bytes_copied,
                        moves_total=e.moves_total, now_ms=at)
    else:
        return
    if new is not None and new != pace:
        e.pace = new.as_dict()


def _progress(e: PlanExecution) -> tuple[Any, ...]:
    # Lists of ints and a dict of strings: a shallow copy is a snapshot.
    return tuple(copy.copy(getattr(e, name)) for name in PROGRESS)


def _shown(e: PlanExecution) -> tuple[Any, ...]:
    return (e.moves_done, e.moves_failed, len(e.in_flight), e.state, e.bytes_copied)


def _note_finished(hot: HotState, e: PlanExecution, moves: list[PlanMove], at: int) -> None:
    still: list[int] = []
    waiting: dict[str, list[Any]] = {}
    for index in e.in_flight:
        move = moves[index]
        rs = hot.state.replica_sets.get((move.topic, move.partition))
        moving = rs is not None and rs.move is not None
        ended = finished_move(move, rs.replicas if rs else None, moving)
        if ended is None:
            still.append(index)
            why = core.waiting_on(hot.state, rs, rs.move) \
                if rs is not None and rs.move is not None else None
            if why is not None:
                waiting[str(index)] = _wait(e, index, why, at)
        elif ended.reached:
            e.moves_done += 1
            copied = _bytes_per_replica(rs)
            e.landed[str(index)] = copied
            e.bytes_moved += copied * len(move.added)
        else:
            _fail(e, move, _why_failed(move, rs, (e.waiting.get(str(index)) or [None])[0]))
    e.in_flight = still
    # Moves not started keep their entries (``_give_up_waiting`` keeps them up to date).
    unstarted = {k: v for k, v in e.waiting.items() if int(k) not in set(e.started)}
    e.waiting = {**unstarted, **waiting}


def _wait(e: PlanExecution, index: int, why: str, at: int) -> list[Any]:
    """[what the move waits on, since when (ms)]: the time kept while the reason stays."""
    was = e.waiting.get(str(index))
    return [why, was[1] if was and was[0] == why else at]


def _why_failed(move: PlanMove, rs: core.ReplicaSet | None, waited: str | None) -> str:
    """How a move ended short of its target, and on what it waited (the core's words)."""
    if rs is None:
        return "partition gone"
    where = "rolled back" if tuple(rs.replicas) == move.before else \
        f"ended with replicas {list(rs.replicas)}"
    return f"{where} ({waited})" if waited else where


def _bytes_per_replica(rs: core.ReplicaSet) -> int:
    """Every new replica copies the whole retained log: records x record size."""
    leo = max((len(r.log) for r in rs.replica.values()), default=0)
    return leo * settings.REPLICATION_RECORD_BYTES


def _copying(hot: HotState, e: PlanExecution, moves: list[PlanMove]) -> int:
    """Bytes the new replicas of the moves in flight already hold."""
    copied = 0
    for index in e.in_flight:
        move = moves[index]
        rs = hot.state.replica_sets.get((move.topic, move.partition))
        for spu in move.added if rs is not None else ():
            replica = rs.replica.get(spu)
            copied += len(replica.log) if replica is not None else 0
    return copied * settings.REPLICATION_RECORD_BYTES


def _fail(e: PlanExecution, move: PlanMove, why: str) -> None:
    e.moves_failed += 1
    if not e.reason:
        e.reason = f"{move.topic}/{move.partition}: {why}"


def _start_moves(hot: HotState, e: PlanExecution, moves: list[PlanMove], at: int) -> list[Action]:
    pending = _give_up_waiting(hot, e, moves, at)
    flying = [moves[i] for i in e.in_flight]
    chosen = core.moves_to_start(pending, flying, max_per_spu=e.max_moves_per_spu,
                                 max_moves=e.max_moves, spus_of=_moved)
    chosen_moves = _within_byte_rate(hot, e, chosen, at)
    actions: list[Action] = []
    for move in chosen_moves:
        e.started.append(move.index)
        try:
            actions += _start(hot, move, at)
            e.in_flight.append(move.index)
        except ReplicationError as exc:
            _fail(e, move, str(exc))
    return actions


def _give_up_waiting(hot: HotState, e: PlanExecution, moves: list[PlanMove], at: int
                     ) -> list[PlanMove]:
    """A move not started because a new replica's SPU is down waits for it as long as a
    move in flight would (the move timeout), then fails: the plan ends instead of running
    for ever. Returns the moves that may start (``_pending``'s, from the same pass)."""
    started, up = set(e.started), _up(hot.state.spus)
    timeout = settings.PLAN_MOVE_TIMEOUT_MS
    pending: list[PlanMove] = []
    for move in moves:
        if move.index in started:
            continue
        if up.issuperset(move.added):
            if e.waiting:
                e.waiting.pop(str(move.index), None)
            pending.append(move)
            continue
        down = [s for s in move.added if s not in up]
        why, since = _wait(e, move.index, f"new replica SPU {down[0]} offline", at)
        if at - since < timeout:
            e.waiting[str(move.index)] = [why, since]
            continue
        e.waiting.pop(str(move.index), None)
        e.started.append(move.index)
        _fail(e, move, f"not started: {why} for {at - since} ms (timeout {timeout} ms)")
    return pending


def _within_byte_rate(hot: HotState, e: PlanExecution, chosen: list[PlanMove],
                      at: int) -> list[PlanMove]:
    rate = e.throttle_bytes_per_s
    if not rate or not chosen:
        return chosen
    bucket = refill(ByteBucket(e.throttle_tokens, e.throttle_at_ms), rate, at)
    sizes = [_move_bytes(hot, m) for m in chosen]
    count, bucket = within_byte_rate(sizes, bucket, rate)
    if count:  # an idle tick keeps the stored bucket: refilling later gives the same tokens
        e.throttle_tokens, e.throttle_at_ms = bucket
    return chosen[:count]


def _move_bytes(hot: HotState, move: PlanMove) -> int:
    rs = hot.state.replica_sets.get((move.topic, move.partition))
    return 0 if rs is None else _bytes_per_replica(rs) * len(move.added)


def _start(hot: HotState, move: PlanMove, at: int) -> list[Action]:
    rs = hot.state.replica_set(move.topic, move.partition)
    if rs.move is not None and (tuple(rs.move.original), tuple(rs.move.target)) == \
            (move.before, move.after):
        return []  # already under way: a start whose progress never reached the database
    if tuple(rs.replicas) != move.before:
        raise ReplicationError(f"replicas are {rs.replicas}, the plan expected {list(move.before)}")
    # The target's first replica leads at the end: the plan balanced leaders that way.
    return core.handle(hot.state, core.ReassignPartition(
        move.topic, move.partition, move.after, elect_preferred=True,
        timeout_ms=settings.PLAN_MOVE_TIMEOUT_MS, now_ms=at))


def _cancel_in_flight(hot: HotState, e: PlanExecution, moves: list[PlanMove]) -> list[Action]:
    actions: list[Action] = []
    for index in e.in_flight:
        move = moves[index]
        try:
            actions += core.handle(hot.state, core.CancelReassignment(move.topic, move.partition))
        except ReplicationError:
            continue  # it ended on this very tick; the next step counts it
    e.cancel_sent = True
    return actions


def _end_state(e: PlanExecution) -> ExecutionState | None:
    state = S(e.state)
    end = final_state(state, total=e.moves_total, started=len(e.started),
                      in_flight=len(e.in_flight), failed=e.moves_failed)
    if end is None and state is S.CANCELLED and e.cancel_sent and not e.in_flight:
        end = S.CANCELLED
    return end


def _save(e: PlanExecution, end: ExecutionState | None, shown: tuple[Any, ...]) -> None:
    """After the tick's save: progress columns always; the state only from the one it was
    read in (a pause may have raced)."""
    PlanExecution.objects.filter(pk=e.pk).update(**{name: getattr(e, name) for name in PROGRESS})
    if end is not None:
        now = timezone.now()
        if PlanExecution.objects.filter(pk=e.pk, state=e.state).update(
                state=end.value, finished_at=now):
            e.state, e.finished_at = end.value, now
            log_event(EXECUTOR, "plan", e.plan_id, end.value,
                      {"moves_done": e.moves_done, "moves_failed": e.moves_failed},
                      result=e.reason)
    if shown != _shown(e):
        announce(e)


def announce(e: PlanExecution) -> None:
    """The plan's page and the cluster's pages: coalesced, built and sent off this thread."""
    if not settings.LIVE_UPDATES:
        return
    snapshot = copy.copy(e)
    snapshot.landed, snapshot.in_flight = dict(e.landed), list(e.in_flight)
    moves = moves_of(e.plan_id)
    counts = PlanProgress(type="plan.progress", plan=e.plan_id, state=e.state,
                          moves_total=e.moves_total, moves_done=e.moves_done,
                          moves_in_flight=len(e.in_flight))
    offer_apply_progress(e.plan_id, lambda: execution_record(snapshot, moves), counts)
