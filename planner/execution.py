"""Carrying stored plans out: apply, pause, resume, cancel, a change of throttle, status.

The use cases validate a request and append its ``plan-control`` intent to the
metadata log first (issue 32); the execution row is that entry's projection
(planner/intents.py), written before the use case returns. Every change of the replication
state is the executor's (planner/executor.py), which runs inside each
replication tick. With a worker that is the beat's tick; without one
``plan_wait`` steps the ticks here (services/waiting.py). Rules (states,
drift, outcomes, throttles, pace) are in planner/core/execution/. One plan is
carried out at a time: an apply checks it again under the lock every catch-up of the
store takes, then logs, so of two applies racing only one enters the log; the database's
constraint (planner/models.py) still decides where no lock is held (an apply inside a
caller's transaction writes its row first).
"""
from __future__ import annotations

from django.conf import settings
from django.db import connection, transaction

from cluster import ports
from cluster.services.waiting import kick, wait_until, worker_running
from cluster.core.spus import SpuResolution
from cluster.core.topic_controller import TopicResolution
from cluster.errors import Conflict, DomainError, InvalidInput, NotFound
from cluster.models import Spu, Topic
from cluster.core.replication import intents
from cluster.services.events import Actor, actor_name, log_event, record_intent
from planner.core.execution import (KEEP, RETUNABLE, ExecutionState, Keep, PlanMove,
                                    Throttles,
                                    layout_drift, layout_of, plan_moves, preparation_steps,
                                    retuned, targets_not_ready, throttle_problem,
                                    unavailable_targets)
from planner.core.jobs import PlanState
from planner.executor import announce
from planner.intents import TRANSITIONS
from planner.running import executing
from planner.models import Plan, PlanExecution
from planner.preemption import preempting, yielding
from planner.selectors import PlanStatus, pace_of
from planner.services import plan_cancel as plan_cancel_computation

S = ExecutionState


class ExecutionStatus(PlanStatus):
    """``plan status --json``: issue 12's keys (planner/selectors.py), the throttles,
    the bytes copied so far and their rate, and the estimated finish while running."""
    moves_failed: int
    max_moves_per_spu: int
    max_moves: int
    throttle_bytes_per_s: int | None
    bytes_copied: int
    bytes_per_s: float | None
    eta_s: float | None
    estimated_finish_at: str | None


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
    pace = pace_of(e, plan.metrics.get("bytes_moved"))
    return ExecutionStatus(id=plan.pk, state=e.state, moves_total=e.moves_total,
                           moves_done=e.moves_done, moves_in_flight=len(e.in_flight),
                           bytes_moved=e.bytes_moved, started_at=_iso(e.started_at),
                           finished_at=_iso(e.finished_at), reason=e.reason,
                           moves_failed=e.moves_failed, max_moves_per_spu=e.max_moves_per_spu,
                           max_moves=e.max_moves, throttle_bytes_per_s=e.throttle_bytes_per_s,
                           bytes_copied=e.bytes_copied, **pace)


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
    _check_targets(plan, moves)


def _check_targets(plan: Plan, moves: list[PlanMove]) -> None:
    registered = Spu.objects.values_list("id", flat=True)
    online = Spu.objects.filter(resolution=SpuResolution.ONLINE.value).values_list("id", flat=True)
    ready = targets_not_ready(moves, registered, online)
    if ready.unregistered or ready.offline:
        missing = unavailable_targets(moves, registered, online)
        racks = {s["id"]: s.get("rack") for s in plan.scenario.get("add_spus", [])}
        steps = preparation_steps(ready, racks)
        raise Conflict(f"plan {plan.pk} moves replicas to SPUs that cannot take them: "
                       f"{'; '.join(missing)} (first {', then '.join(steps)}, then apply "
                       "again)", field="plan_id", details={"spus": missing, "steps": steps})


def _check_caps(max_moves_per_spu: int, max_moves: int,
                throttle_bytes_per_s: int | None) -> None:
    problem = throttle_problem(Throttles(max_moves_per_spu, max_moves, throttle_bytes_per_s))
    if problem is not None:
        raise InvalidInput(problem[1], field=problem[0])


def _active() -> PlanExecution | None:
    return PlanExecution.objects.filter(finished_at__isnull=True).first()


def _one_at_a_time() -> Conflict:
    other = _active()
    which = f"plan {other.plan_id} is being carried out ({other.state})" if other else \
        "another plan is being carried out"
    return Conflict(f"{which}; one plan at a time", field="plan_id")


def plan_apply(*, plan_id: int, max_moves_per_spu: int | None = None,
               max_moves: int | None = None, throttle_bytes_per_s: int | None = None,
               by: Actor = None) -> PlanExecution:
    """Start carrying the plan out; refused (nothing changed) when it no longer fits.

    An operator's apply takes precedence over a plan that yields to operators (self-healing's,
    planner/preemption.py) being carried out: that plan is cancelled as any plan is (no new
    moves, those in flight roll back or finish) and, once its execution ended, this one starts.
    The one-plan constraint still decides: two operators' plans refuse each other."""
    per_spu = settings.PLAN_MAX_MOVES_PER_SPU if max_moves_per_spu is None else max_moves_per_spu
    total = settings.PLAN_MAX_MOVES if max_moves is None else max_moves
    _check_caps(per_spu, total, throttle_bytes_per_s)
    running = yielding(by)
    if running is None:
        return _apply(plan_id, per_spu, total, throttle_bytes_per_s, by)
    plan = _plan(plan_id)  # a plan that cannot start cancels nothing
    _not_applied(plan)
    _check_targets(plan, plan_moves(plan.moves))
    _make_way(running, plan_id, by)
    try:
        return _apply(plan_id, per_spu, total, throttle_bytes_per_s, by)
    except DomainError as exc:
        # E.g. the yielding plan's finished moves changed what this plan started from. The
        # yielding app waits a while for this operator's next apply (planner/preemption.py).
        raise type(exc)(f"{exc.message} ({running.created_by}'s plan {running.plan_id} was "
                        "cancelled to make way and waits for yours: plan again from the "
                        "cluster as it now is, then apply)", field=exc.field,
                        details=exc.details) from None


def _not_applied(plan: Plan) -> None:
    if _execution(plan) is not None:
        raise Conflict(f"plan {plan.pk} was already applied ({plan.execution.state})",
                       field="plan_id")


def _apply(plan_id: int, per_spu: int, total: int, rate: int | None,
           by: Actor) -> PlanExecution:
    plan = _plan(plan_id)
    _not_applied(plan)
    if _active() is not None:  # the common refusal, in words
        raise _one_at_a_time()
    moves = plan_moves(plan.moves)
    _check_applicable(plan, moves)
    params = {"moves": len(moves), "max_moves_per_spu": per_spu, "max_moves": total,
              "throttle_bytes_per_s": rate}
    log_first = not connection.in_atomic_block
    with transaction.atomic():
        if log_first:
            # Under the lock every catch-up takes: of two applies racing, the second sees the
            # first's execution here and logs nothing (a refused apply never enters the log).
            ports.hold_store_log()
            _not_applied(_plan(plan_id))
            if _active() is not None:
                raise _one_at_a_time()
        record_intent(by, intents.plan_control("apply", plan.pk, params), inside=log_first)
        execution = _execution(_plan(plan_id))
        if execution is None and not log_first:
            # The projection found another plan started (no lock held here): the rollback
            # drops the entry the caller's commit would have logged.
            raise _one_at_a_time()
    if execution is None:
        raise _one_at_a_time()
    transaction.on_commit(_nudge)
    transaction.on_commit(lambda: announce(execution))
    return execution


def _make_way(running: PlanExecution, plan_id: int, by: Actor) -> None:
    """Cancel the yielding plan (told first, in the same transaction) and wait for its
    execution to end. Already cancelled (an apply that gave up waiting): only wait."""
    with transaction.atomic():
        preempting(execution=running, plan_id=plan_id, by=by)
        if running.state != S.CANCELLED.value:
            try:
                _transition(running.plan_id, "cancel", by,
                            reason=f"pre-empted by plan {plan_id} of {actor_name(by)}")
            except Conflict:
                pass  # it ended meanwhile: nothing to cancel, nothing to wait for
    wait_s = settings.PLAN_PREEMPT_WAIT_S
    if not plan_wait(plan_id=running.plan_id, timeout_s=wait_s):
        raise Conflict(f"{running.created_by}'s plan {running.plan_id} is being cancelled to "
                       f"make way for plan {plan_id}, and its moves in flight have not ended "
                       f"after {wait_s:g} s; apply again in a moment", field="plan_id")


def _nudge() -> None:
    if worker_running():
        kick()


# ---- pause, resume, cancel: the executor reads the new state at its next step -------

def _transition(plan_id: int, operation: str, by: Actor,
                reason: str | None = None) -> PlanExecution:
    # The states it may change and the one it moves them to: the projection's own table.
    allowed, new = TRANSITIONS[operation]
    execution = _execution(_plan(plan_id))
    if execution is None or S(execution.state) not in allowed:
        raise _cannot(plan_id, execution, operation)
    record_intent(by, intents.plan_control(operation, plan_id, reason=reason))
    execution.refresh_from_db()
    # The projection changes the state only if it still allows it: the executor may race.
    if execution.state != new.value:
        raise _cannot(plan_id, execution, operation)
    transaction.on_commit(_nudge)
    # Other pages on this plan hear of the pause, resume or cancel before any move ends.
    transaction.on_commit(lambda: announce(execution))
    return execution


def _cannot(plan_id: int, execution: PlanExecution | None, operation: str) -> Conflict:
    state = execution.state if execution else S.PENDING.value
    return Conflict(f"plan {plan_id} is {state}: it cannot be {operation}d now",
                    field="plan_id", details={"state": state})


def plan_pause(*, plan_id: int, by: Actor = None) -> PlanExecution:
    """No new moves start; those in flight finish."""
    return _transition(plan_id, "pause", by)


def plan_resume(*, plan_id: int, by: Actor = None) -> PlanExecution:
    return _transition(plan_id, "resume", by)


def plan_cancel(*, plan_id: int, by: Actor = None) -> PlanExecution:
    """No new moves; those in flight roll back (or finish where rolling back is unsafe)."""
    return _transition(plan_id, "cancel", by)


def plan_throttle(*, plan_id: int, max_moves_per_spu: int | Keep = KEEP,
                  max_moves: int | Keep = KEEP, throttle_bytes_per_s: int | None | Keep = KEEP,
                  by: Actor = None) -> PlanExecution:
    """Change the throttles of a plan being carried out (running or paused), those named
    (``throttle_bytes_per_s`` None: no byte throttle); the executor uses them from its next
    step. Refused, nothing changed, for a bad value or a plan that is not under way."""
    given = {"max_moves_per_spu": max_moves_per_spu, "max_moves": max_moves,
             "throttle_bytes_per_s": throttle_bytes_per_s}
    if all(value is KEEP for value in given.values()):
        raise InvalidInput("give a new max_moves_per_spu, max_moves or throttle_bytes_per_s",
                           details={"fields": list(given)})
    execution = _execution(_plan(plan_id))
    was = Throttles(execution.max_moves_per_spu, execution.max_moves,
                    execution.throttle_bytes_per_s) if execution else Throttles(1, 1, None)
    new = retuned(was, max_moves_per_spu=max_moves_per_spu, max_moves=max_moves,
                  bytes_per_s=throttle_bytes_per_s)
    _check_caps(*new)
    with transaction.atomic():
        # Conditional on the state, as a pause is: the plan may have ended meanwhile.
        changed = execution is not None and PlanExecution.objects.filter(
            pk=execution.pk, state__in=[s.value for s in RETUNABLE]).update(
            max_moves_per_spu=new.max_moves_per_spu, max_moves=new.max_moves,
            throttle_bytes_per_s=new.bytes_per_s)
        if not changed:
            state = execution.state if execution else S.PENDING.value
            raise Conflict(f"plan {plan_id} is {state}: only the throttle of a running or "
                           "paused plan can change", field="plan_id", details={"state": state})
        log_event(by, "plan", plan_id, "throttle",
                  {"max_moves_per_spu": new.max_moves_per_spu, "max_moves": new.max_moves,
                   "throttle_bytes_per_s": new.bytes_per_s, "was": was._asdict()})
        transaction.on_commit(_nudge)
    execution.refresh_from_db()
    transaction.on_commit(lambda: announce(execution))
    return execution


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


def moves_in_flight() -> int:
    """Moves started and not finished, over every running or paused plan (for /metrics)."""
    return sum(len(e.in_flight) for e in executing())


def plan_finished(plan_id: int) -> bool:
    execution = PlanExecution.objects.filter(plan_id=plan_id).first()
    return execution is not None and execution.finished_at is not None


def plan_wait(*, plan_id: int, timeout_s: float) -> bool:
    """Until the execution ends: poll the worker, or step the replication ticks here."""
    return wait_until(lambda: plan_finished(plan_id), timeout_s=timeout_s)


