"""Carrying stored plans out: apply, pause, resume, cancel, status, and the executor.

The use cases only write the execution row; every change of the replication
state is the executor's, which runs inside each replication tick
(``plan_executor_step``, installed at app ready through
cluster/adapters/tick_steps.py): it notes the moves that ended, starts the
next ones Cruise Control's throttle allows (``core.moves_to_start``), sends
cancels, records progress and announces it. With a worker that is the beat's
tick; without one ``plan_wait`` steps the ticks here (services/settle.py).
Rules (states, drift, outcomes) are in planner/core/execution.py.
"""
from __future__ import annotations

import copy

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from cluster.adapters.hot_state import HotState
from cluster.services.settle import kick, settle, worker_running
from cluster.core import replication as core
from cluster.core.replication import Action, PlannedMove, ReplicationError
from cluster.core.spus import SpuResolution
from cluster.core.topic_controller import TopicResolution
from cluster.errors import Conflict, InvalidInput, NotFound
from cluster.live import PlanProgress
from cluster.models import Spu, Topic
from cluster.services.events import Actor, actor_name, log_event
from planner.core.execution import (CANCELLABLE, PAUSABLE, RESUMABLE, ExecutionState,
                                    PlanMove, final_state, finished_move, layout_drift,
                                    layout_of, plan_moves, unavailable_targets)
from planner.live import offer_apply_progress
from planner.models import Plan, PlanExecution
from planner.selectors import PlanStatus, execution_record
from planner.core.jobs import PlanState
from planner.services import plan_cancel as plan_cancel_computation
from planner.services import plan_drain

EXECUTOR = "plan-executor"
S = ExecutionState


class ExecutionStatus(PlanStatus):
    """``plan status --json``: issue 12's keys (planner/selectors.py) and the throttle."""
    moves_failed: int
    max_moves_per_spu: int
    max_moves: int


def _plan(plan_id: int) -> Plan:
    plan = Plan.objects.filter(pk=plan_id).select_related("execution").first()
    if plan is None:
        raise NotFound(f"plan {plan_id} not found", field="plan_id")
    return plan


def _execution(plan: Plan) -> PlanExecution | None:
    try:
        return plan.execution
    except PlanExecution.DoesNotExist:
        return None


def _iso(moment) -> str | None:
    return moment.isoformat() if moment else None


def plan_status(*, plan_id: int) -> ExecutionStatus:
    plan = _plan(plan_id)
    e = _execution(plan) or PlanExecution(plan=plan, moves_total=len(plan.moves))
    return ExecutionStatus(id=plan.pk, state=e.state, moves_total=e.moves_total,
                      moves_done=e.moves_done, moves_in_flight=len(e.in_flight),
                      bytes_moved=e.bytes_moved, started_at=_iso(e.started_at),
                      finished_at=_iso(e.finished_at), reason=e.reason,
                      moves_failed=e.moves_failed, max_moves_per_spu=e.max_moves_per_spu,
                      max_moves=e.max_moves)


# ---- apply: refuse a plan made for another cluster ---------------------------------

def _store_layout(topics: list[str]) -> dict[str, list[list[int]]]:
    return dict(Topic.objects.filter(name__in=topics, resolution=TopicResolution.PROVISIONED.value)
                .values_list("name", "replica_map"))


def _check_applicable(plan: Plan, moves: list[PlanMove]) -> None:
    planned = layout_of(plan.current)
    drift = layout_drift(planned, _store_layout(list(planned)))
    if drift:
        raise Conflict(f"plan {plan.pk} no longer matches the cluster: {drift[0]}",
                       field="plan_id", details={"drift": drift})
    registered = Spu.objects.values_list("id", flat=True)
    online = Spu.objects.filter(resolution=SpuResolution.ONLINE.value).values_list("id", flat=True)
    missing = unavailable_targets(moves, registered, online)
    if missing:
        raise Conflict(f"plan {plan.pk} moves replicas to SPUs that cannot take them: "
                       f"{'; '.join(missing)}", field="plan_id", details={"spus": missing})


def _check_caps(max_moves_per_spu: int, max_moves: int) -> None:
    for name, value in (("max_moves_per_spu", max_moves_per_spu), ("max_moves", max_moves)):
        if value < 1:
            raise InvalidInput(f"{name} must be at least 1", field=name)


def _active() -> PlanExecution | None:
    return (PlanExecution.objects.filter(state__in=[S.RUNNING.value, S.PAUSED.value])
            .first() or PlanExecution.objects.filter(state=S.CANCELLED.value,
                                                     finished_at__isnull=True).first())


@transaction.atomic
def plan_apply(*, plan_id: int, max_moves_per_spu: int | None = None,
               max_moves: int | None = None, by: Actor = None) -> PlanExecution:
    """Start carrying the plan out; refused (nothing changed) when it no longer fits."""
    per_spu = settings.PLAN_MAX_MOVES_PER_SPU if max_moves_per_spu is None else max_moves_per_spu
    total = settings.PLAN_MAX_MOVES if max_moves is None else max_moves
    _check_caps(per_spu, total)
    plan = _plan(plan_id)
    if _execution(plan) is not None:
        raise Conflict(f"plan {plan_id} was already applied ({plan.execution.state})",
                       field="plan_id")
    other = _active()
    if other is not None:
        raise Conflict(f"plan {other.plan_id} is being carried out ({other.state}); "
                       "one plan at a time", field="plan_id")
    moves = plan_moves(plan.moves)
    _check_applicable(plan, moves)
    execution = PlanExecution.objects.create(
        plan=plan, state=(S.RUNNING if moves else S.DONE).value, max_moves_per_spu=per_spu,
        max_moves=total, moves_total=len(moves), started_at=timezone.now(),
        finished_at=None if moves else timezone.now(), created_by=actor_name(by))
    log_event(by, "plan", plan.pk, "apply", {"moves": len(moves), "max_moves_per_spu": per_spu,
                                            "max_moves": total})
    transaction.on_commit(_nudge)
    transaction.on_commit(lambda: _announce(execution))
    return execution


def _nudge() -> None:
    if worker_running():
        kick()


# ---- pause, resume, cancel: the executor reads the new state at its next step -------

def _transition(plan_id: int, allowed: frozenset[ExecutionState], new: ExecutionState,
                operation: str, by: Actor, **fields: object) -> PlanExecution:
    execution = _execution(_plan(plan_id))
    state = S(execution.state) if execution else S.PENDING
    # Conditional on the state still being one that allows the request: the executor may race.
    changed = execution is not None and PlanExecution.objects.filter(
        pk=execution.pk, state__in=[s.value for s in allowed]).update(state=new.value, **fields)
    if not changed:
        raise Conflict(f"plan {plan_id} is {state.value}: it cannot be {operation}d now",
                       field="plan_id", details={"state": state.value})
    log_event(by, "plan", plan_id, operation)
    transaction.on_commit(_nudge)
    execution.refresh_from_db()
    # Other pages on this plan hear of the pause, resume or cancel before any move ends.
    transaction.on_commit(lambda: _announce(execution))
    return execution


def plan_pause(*, plan_id: int, by: Actor = None) -> PlanExecution:
    """No new moves start; those in flight finish."""
    return _transition(plan_id, PAUSABLE, S.PAUSED, "pause", by)


def plan_resume(*, plan_id: int, by: Actor = None) -> PlanExecution:
    return _transition(plan_id, RESUMABLE, S.RUNNING, "resume", by)


def plan_cancel(*, plan_id: int, by: Actor = None) -> PlanExecution:
    """No new moves; those in flight roll back (or finish where rolling back is unsafe)."""
    return _transition(plan_id, CANCELLABLE, S.CANCELLED, "cancel", by, cancel_sent=False,
                       reason="cancelled")


def plan_stop(*, plan_id: int, by: Actor = None) -> Plan:
    """The one cancel of a plan: its computation while it runs, its execution once applied."""
    if Plan.objects.filter(pk=plan_id, state=PlanState.COMPUTING.value).exists():
        return plan_cancel_computation(plan_id=plan_id, by=by)
    try:
        plan_cancel(plan_id=plan_id, by=by)
    except Conflict as exc:
        state = (exc.details or {}).get("state", "pending")
        raise Conflict(f"plan {plan_id} is {state}: only a plan being computed or being "
                       "carried out can be cancelled", field="plan_id",
                       details=exc.details) from None
    return _plan(plan_id)


@transaction.atomic
def spu_drain(*, spu_id: int, max_moves_per_spu: int | None = None,
              max_moves: int | None = None, by: Actor = None) -> PlanExecution:
    """Plan the SPU's decommission and apply it: afterwards it holds no replica."""
    plan = plan_drain(spu_id=spu_id, by=by)
    return plan_apply(plan_id=plan.pk, max_moves_per_spu=max_moves_per_spu,
                      max_moves=max_moves, by=by)


def moves_in_flight() -> int:
    """Moves started and not finished, over every running or paused plan (for /metrics)."""
    return sum(len(e.in_flight) for e in _executing())


def plan_finished(plan_id: int) -> bool:
    execution = PlanExecution.objects.filter(plan_id=plan_id).first()
    return execution is not None and execution.finished_at is not None


def plan_wait(*, plan_id: int, timeout_s: float) -> bool:
    """Until the execution ends: poll the worker, or step the replication ticks here."""
    return settle(lambda: plan_finished(plan_id), timeout_s=timeout_s)


# ---- the executor (inside each replication tick) ------------------------------------

def _executing() -> list[PlanExecution]:
    return list(PlanExecution.objects.filter(
        state__in=[S.RUNNING.value, S.PAUSED.value, S.CANCELLED.value],
        finished_at__isnull=True))


# A stored plan never changes, so its parsed moves are kept for the ticks that follow:
# reading the plan row each tick decoded its whole "current" layout (10,000 partitions).
# Keyed with the creation time too: a database made anew reuses plan ids.
_moves_cache: dict[tuple[int, object], list[PlanMove]] = {}


def _moves_of(plan_id: int) -> list[PlanMove]:
    key = (plan_id, Plan.objects.filter(pk=plan_id).values_list("created_at", flat=True).get())
    if key not in _moves_cache:
        _moves_cache.clear()
        rows = Plan.objects.filter(pk=plan_id).values_list("moves", flat=True).get()
        _moves_cache[key] = plan_moves(rows)
    return _moves_cache[key]


def plan_executor_step(hot: HotState, at: int) -> list[Action]:
    """Note ended moves, start or cancel moves, record progress: every live execution."""
    actions: list[Action] = []
    for execution in _executing():
        actions += _step(hot, execution, at)
    return actions


def _step(hot: HotState, e: PlanExecution, at: int) -> list[Action]:
    moves = _moves_of(e.plan_id)
    before = (e.moves_done, e.moves_failed, len(e.in_flight), e.state)
    _note_finished(hot, e, moves)
    actions: list[Action] = []
    if e.state == S.RUNNING.value:
        actions += _start_moves(hot, e, moves, at)
    elif e.state == S.CANCELLED.value and not e.cancel_sent:
        actions += _cancel_in_flight(hot, e, moves)
    _save(e)
    if before != (e.moves_done, e.moves_failed, len(e.in_flight), e.state):
        _announce(e)
    return actions


def _note_finished(hot: HotState, e: PlanExecution, moves: list[PlanMove]) -> None:
    still: list[int] = []
    for index in e.in_flight:
        move = moves[index]
        rs = hot.state.replica_sets.get((move.topic, move.partition))
        moving = rs is not None and rs.move is not None
        ended = finished_move(move, rs.replicas if rs else None, moving)
        if ended is None:
            still.append(index)
        elif ended.reached:
            e.moves_done += 1
            copied = _bytes_per_replica(rs)
            e.landed[str(index)] = copied
            e.bytes_moved += copied * len(move.added)
        else:
            _fail(e, move, "rolled back" if rs is not None else "partition gone")
    e.in_flight = still


def _bytes_per_replica(rs: core.ReplicaSet) -> int:
    """Every new replica copied the whole log: records x record size."""
    leo = max((len(r.log) for r in rs.replica.values()), default=0)
    return leo * settings.REPLICATION_RECORD_BYTES


def _fail(e: PlanExecution, move: PlanMove, why: str) -> None:
    e.moves_failed += 1
    if not e.reason:
        e.reason = f"{move.topic}/{move.partition}: {why}"


def _start_moves(hot: HotState, e: PlanExecution, moves: list[PlanMove], at: int) -> list[Action]:
    started, spus = set(e.started), hot.state.spus
    # A move onto an SPU that is down would only stall: it waits, unstarted, for the SPU.
    pending = [_planned(m) for m in moves
               if m.index not in started and all(spus.get(s) for s in m.added)]
    flying = [_planned(moves[i]) for i in e.in_flight]
    chosen = core.moves_to_start(pending, flying, max_per_spu=e.max_moves_per_spu,
                                 max_moves=e.max_moves)
    by_key = {(m.topic, m.partition): m for m in moves if m.index not in started}
    actions: list[Action] = []
    for planned in chosen:
        move = by_key[(planned.topic, planned.partition)]
        e.started.append(move.index)
        try:
            actions += _start(hot, move, at)
            e.in_flight.append(move.index)
        except ReplicationError as exc:
            _fail(e, move, str(exc))
    return actions


def _planned(m: PlanMove) -> PlannedMove:
    return PlannedMove(m.topic, m.partition, m.before, m.after)


def _start(hot: HotState, move: PlanMove, at: int) -> list[Action]:
    rs = hot.state.replica_set(move.topic, move.partition)
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


def _save(e: PlanExecution) -> None:
    """Progress columns always; the state only from the one it was read in (a pause may race)."""
    PlanExecution.objects.filter(pk=e.pk).update(
        moves_done=e.moves_done, moves_failed=e.moves_failed, bytes_moved=e.bytes_moved,
        started=e.started, in_flight=e.in_flight, cancel_sent=e.cancel_sent, reason=e.reason,
        landed=e.landed)
    state = S(e.state)
    end = final_state(state, total=e.moves_total, started=len(e.started),
                      in_flight=len(e.in_flight), failed=e.moves_failed)
    if end is None and state is S.CANCELLED and e.cancel_sent and not e.in_flight:
        end = S.CANCELLED
    if end is not None:
        now = timezone.now()
        if PlanExecution.objects.filter(pk=e.pk, state=state.value).update(
                state=end.value, finished_at=now):
            e.state, e.finished_at = end.value, now
            log_event(EXECUTOR, "plan", e.plan_id, end.value,
                      {"moves_done": e.moves_done, "moves_failed": e.moves_failed},
                      result=e.reason)


def _announce(e: PlanExecution) -> None:
    """The plan's page and the cluster's pages: coalesced, built and sent off this thread."""
    if not settings.LIVE_UPDATES:
        return
    snapshot = copy.copy(e)
    snapshot.landed, snapshot.in_flight = dict(e.landed), list(e.in_flight)
    moves = _moves_of(e.plan_id)
    counts = PlanProgress(type="plan.progress", plan=e.plan_id, state=e.state,
                          moves_total=e.moves_total, moves_done=e.moves_done,
                          moves_in_flight=len(e.in_flight))
    offer_apply_progress(e.plan_id, lambda: execution_record(snapshot, moves), counts)
