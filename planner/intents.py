"""A plan's execution row as the projection of its ``plan-control`` intents (issue 32).

``plan apply/pause/resume/cancel`` (planner/execution.py) validate the request, append
its intent to the metadata log (who asked in ``by``) and return once the store's catch-up
has applied it: the catch-up hands the entry here (``Engine.intent_projections``, wired
in composition/bootstrap.py), inside its transaction, and this writes the execution row from
the entry alone. An apply creates the row with its throttles, started at the entry's
time; a pause, resume or cancel changes its state where the state still allows it (the
executor may have ended the plan since the command read it: then nothing changes, and
the command says so). Each change returns its event row, which takes the entry's offset.

Idempotent, as every projection of the log: an apply applied again finds the plan's
execution and writes nothing; a pause, resume or cancel applied again finds a state that
no longer allows it (a replay of the whole log from an earlier offset applies them in
their order and ends where they ended). Nothing here raises for an entry it cannot apply:
a catch-up that raised would stop every later entry from reaching the store.
"""
from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from django.db import IntegrityError, transaction

from cluster.models import Event
from planner.core.execution import (CANCELLABLE, PAUSABLE, RESUMABLE, ExecutionState,
                                    full_bucket, pace_started)
from planner.models import Plan, PlanExecution

S = ExecutionState
# A request's states it may change, and the state it moves them to.
TRANSITIONS: dict[str, tuple[frozenset[ExecutionState], ExecutionState]] = {
    "pause": (PAUSABLE, S.PAUSED), "resume": (RESUMABLE, S.RUNNING),
    "cancel": (CANCELLABLE, S.CANCELLED)}
CANCELLED = "cancelled"  # an operator's cancel's reason


def apply(entry: dict[str, Any]) -> list[Event]:
    """Write the execution row a ``plan-control`` entry asks for; its event row, unsaved
    (none when the entry changed nothing)."""
    action = entry["action"]
    changed = _start(entry) if action == "apply" else _transition(entry)
    if not changed:
        return []
    return [Event(actor=entry.get("by") or "system", object_type="plan",
                  object_name=str(entry["plan"]), operation=action,
                  params=entry.get("params") or {})]


def _start(entry: dict[str, Any]) -> bool:
    plan_id, params = entry["plan"], entry.get("params") or {}
    if (PlanExecution.objects.filter(plan_id=plan_id).exists()
            or not Plan.objects.filter(pk=plan_id).exists()):
        return False  # applied already (a replay), or the plan was deleted since
    if PlanExecution.objects.filter(finished_at__isnull=True).exists():
        return False  # one plan at a time: another apply came first
    moves, rate, at_ms = params.get("moves", 0), params.get("throttle_bytes_per_s"), entry["at"]
    started = datetime.fromtimestamp(at_ms / 1000, tz=timezone.utc)
    bucket = full_bucket(rate or 0, at_ms)
    try:
        with transaction.atomic():  # the database's one-plan constraint decides a race
            PlanExecution.objects.create(
                plan_id=plan_id, state=(S.RUNNING if moves else S.DONE).value,
                # The model's defaults for a count an entry lacks: never a KeyError here.
                **{k: params[k] for k in ("max_moves_per_spu", "max_moves") if k in params},
                throttle_bytes_per_s=rate, throttle_tokens=bucket.tokens,
                throttle_at_ms=bucket.at_ms, pace=pace_started(at_ms).as_dict(),
                moves_total=moves, started_at=started,
                finished_at=None if moves else started, created_by=entry.get("by") or "")
    except IntegrityError:
        return False
    return True


def _transition(entry: dict[str, Any]) -> bool:
    allowed, new = TRANSITIONS[entry["action"]]
    fields: dict[str, Any] = {}
    if new is S.CANCELLED:
        fields = {"cancel_sent": False, "reason": entry.get("reason") or CANCELLED}
    # Conditional on the state still allowing it: the executor may have ended the plan.
    return bool(PlanExecution.objects.filter(
        plan_id=entry["plan"], state__in=[s.value for s in allowed]).update(
        state=new.value, **fields))
