"""What the page, the API and ``healing status --json`` show: mode, settings, anomalies."""
from __future__ import annotations

from typing import Any, TypedDict

from django.db.models import Sum

from healing import core
from healing.models import Anomaly, HealingConfig
from healing.plans import ACTOR


class AnomalyRow(TypedDict):
    id: int
    type: str
    subject: str
    state: str
    detail: str
    spus: list[int]
    detected_at: str
    alerted_at: str | None
    planned_at: str | None
    finished_at: str | None
    plan: int | None
    plan_id: int | None  # the same id under the name `healing status --json` readers expect
    plans: int
    preempted_by: int | None  # the operator's plan its plan made way for
    plan_state: str | None
    moves: int | None
    moves_done: int | None
    bytes_moved: int | None
    duration_s: float | None


class HealingStatus(TypedDict):
    mode: str
    waiting: str
    checked_at: str | None
    settings: dict[str, Any]
    anomalies: list[AnomalyRow]
    self_healing_moves: int


def _iso(moment) -> str | None:
    return moment.isoformat() if moment else None


def anomaly_row(a: Anomaly, e: Any = None) -> AnomalyRow:
    """``e``: the plan's execution, if it was applied."""
    return AnomalyRow(id=a.pk, type=a.type, subject=a.subject, state=a.state, detail=a.detail,
                      spus=list(a.spus), detected_at=a.detected_at.isoformat(),
                      alerted_at=_iso(a.alerted_at), planned_at=_iso(a.planned_at),
                      finished_at=_iso(a.finished_at), plan=a.plan_id, plan_id=a.plan_id,
                      plans=a.plans, preempted_by=a.preempted_by_id,
                      plan_state=e.state if e else ("pending" if a.plan_id else None),
                      moves=e.moves_total if e else (a.plan.metrics.get("partitions_moved")
                                                     if a.plan_id else None),
                      moves_done=e.moves_done if e else None,
                      bytes_moved=e.bytes_moved if e else None,
                      duration_s=e.duration_s if e else None)


def _rows(queryset) -> list[AnomalyRow]:
    from planner.models import PlanExecution

    rows = list(queryset.select_related("plan"))
    # Only the execution is needed of each plan, not its (large) moves and layouts.
    executions = {e.plan_id: e for e in PlanExecution.objects.filter(
        plan_id__in=[r.plan_id for r in rows if r.plan_id])}
    return [anomaly_row(r, executions.get(r.plan_id)) for r in rows]


# What the History table shows beyond the open table's columns (templates/healing/healing.html).
HISTORY_FIELDS = ("planned_at", "finished_at", "moves", "moves_done", "bytes_moved", "duration_s")


def history_fields(a: Anomaly) -> dict[str, Any]:
    """The closed anomaly's History columns that have a value (an absent one shows empty)."""
    row: dict[str, Any] = dict(_rows(Anomaly.objects.filter(pk=a.pk).defer(
        "plan__moves", "plan__current", "plan__target"))[0])
    return {name: row[name] for name in HISTORY_FIELDS if row[name] is not None}


def open_anomalies() -> list[AnomalyRow]:
    return _rows(Anomaly.objects.filter(state__in=[s.value for s in core.OPEN_STATES])
                 .defer("plan__moves", "plan__current", "plan__target"))


def anomaly_history(limit: int = 100) -> list[AnomalyRow]:
    return _rows(Anomaly.objects.exclude(state__in=[s.value for s in core.OPEN_STATES])
                 .defer("plan__moves", "plan__current", "plan__target")[:limit])


def self_healing_moves() -> int:
    """Moves self-healing plans carried out, ever (the metric's counter)."""
    from planner.models import PlanExecution

    return PlanExecution.objects.filter(plan__created_by=ACTOR) \
        .aggregate(n=Sum("moves_done"))["n"] or 0


def healing_status() -> HealingStatus:
    row = HealingConfig.objects.filter(pk=HealingConfig.SINGLETON).first() or HealingConfig()
    return HealingStatus(mode=row.mode, waiting=row.waiting, checked_at=_iso(row.checked_at),
                         settings=core.settings_from(row.values).as_dict(),
                         anomalies=open_anomalies(), self_healing_moves=self_healing_moves())
