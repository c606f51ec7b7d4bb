"""An operator's apply pauses self-healing: what self-healing remembers of it.

The planner cancels self-healing's plan when an operator applies one of their
own while it runs (planner/preemption.py, planner/execution.py) and tells us
first, inside the transaction that cancels it: the config row keeps the
cancelled plan, the operator's plan, and until when to wait for that plan to
start. The next detection run turns the anomaly that plan was fixing
``preempted`` (an event with the actor ``self-healing``, in the metadata log),
plans nothing while the operator's plan runs, and then plans afresh from the
cluster as it then is (healing/services.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from healing import core
from healing.models import HealingConfig
from planner.models import PlanExecution

# How long past the operator's wait for the moves in flight self-healing keeps waiting for
# that plan to start: an operator told "apply again in a moment", or to plan again (the
# cancelled plan's finished moves changed the cluster), has this long before self-healing
# plans again (and their next apply pre-empts it again).
RETRY_GRACE_S = 60.0


@dataclass(frozen=True)
class Hold:
    preempted_plan: int | None = None  # self-healing's plan that made way
    held_for: int | None = None  # the operator's plan
    active: bool = False  # self-healing still waits for it


def on_preempting(*, execution: PlanExecution, plan_id: int, **_: Any) -> None:
    """The planner is about to cancel ``execution`` (self-healing's) for the operator's plan."""
    until = timezone.now() + timedelta(seconds=settings.PLAN_PREEMPT_WAIT_S + RETRY_GRACE_S)
    HealingConfig.objects.get_or_create(pk=HealingConfig.SINGLETON)
    HealingConfig.objects.filter(pk=HealingConfig.SINGLETON).update(
        preempted_plan=execution.plan_id, held_for=plan_id, held_until=until)


def hold_of(row: HealingConfig, now_ms: int) -> Hold:
    if row.held_for is None:
        return Hold()
    finished = list(PlanExecution.objects.filter(plan_id=row.held_for)
                    .values_list("finished_at", flat=True))
    until = None if row.held_until is None else int(row.held_until.timestamp() * 1000)
    return Hold(row.preempted_plan, row.held_for,
                core.held(bool(finished), bool(finished) and finished[0] is not None, until,
                          now_ms))


def held_by(row: HealingConfig, now_ms: int) -> Hold:
    """The hold as of now, read afresh under the row's lock (inside the run's write): an
    operator's apply racing this run waits for it, or is seen by it."""
    locked = HealingConfig.objects.select_for_update().get(pk=row.pk)
    return hold_of(locked, now_ms)
