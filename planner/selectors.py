"""Reads of plans and grids shared by the workbench pages and the API."""
from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Iterable, TypedDict

from django.utils import timezone

from planner.core.execution import (ExecutionState, MoveBook, Pace, PlanMove, copy_rate,
                                    eta_s, plan_moves, steady_eta_s)
from planner.core.spu_progress import per_spu_progress
from planner.live import ExecutionRecord
from planner.models import Plan, PlanExecution, PlanGrid
from planner.services import plan_exports


class PlanStatus(TypedDict):
    """Issue 12's ``plan status`` shape."""
    id: int
    state: str
    moves_total: int
    moves_done: int
    moves_in_flight: int
    bytes_moved: int | None
    started_at: str | None
    finished_at: str | None
    reason: str


def plan_status(record: Plan) -> PlanStatus:
    """Once a plan is applied its execution speaks for it (planner/execution.py);
    before that, the computation's state (computing, pending, failed)."""
    e = PlanExecution.objects.filter(plan=record).first()
    if e is not None:
        return PlanStatus(id=record.pk, state=e.state, moves_total=e.moves_total,
                          moves_done=e.moves_done, moves_in_flight=len(e.in_flight),
                          bytes_moved=e.bytes_moved, started_at=_iso(e.started_at),
                          finished_at=_iso(e.finished_at), reason=e.reason)
    return PlanStatus(id=record.pk, state=record.state, moves_total=len(record.moves),
                      moves_done=0, moves_in_flight=0, bytes_moved=None, started_at=None,
                      finished_at=None, reason=record.reason)


def landed_of(e: PlanExecution) -> dict[int, int]:
    return {int(index): copied for index, copied in e.landed.items()}


def pace_of(e: PlanExecution, planned_bytes: object = None) -> dict[str, object]:
    """The copy rate so far and, while running, the estimated finish: from the smoothed
    pace the executor samples (planner/core/execution/pace.py), so that it counts down
    steadily instead of jumping as moves land; the average so far for an execution that
    has no pace stored (applied before there was one)."""
    elapsed = e.duration_s
    rate = copy_rate(e.bytes_copied, elapsed)
    left = None
    if isinstance(planned_bytes, int) and e.throttle_bytes_per_s:
        left = max(0, planned_bytes - e.bytes_copied)
    now = timezone.now()
    eta = None if e.state != ExecutionState.RUNNING.value else _eta(e, elapsed, left, now)
    finish = None if eta is None else _iso(now + timedelta(seconds=eta))
    return {"bytes_per_s": rate, "eta_s": eta, "estimated_finish_at": finish}


def _eta(e: PlanExecution, elapsed: float | None, bytes_left: int | None,
         now: Any) -> float | None:
    pace = Pace.from_dict(e.pace)
    if pace is None:
        return eta_s(moves_done=e.moves_done, moves_total=e.moves_total, elapsed_s=elapsed,
                     bytes_left=bytes_left, rate=e.throttle_bytes_per_s)
    return steady_eta_s(pace, moves_total=e.moves_total, now_ms=int(now.timestamp() * 1000),
                        bytes_left=bytes_left, rate=e.throttle_bytes_per_s)


def execution_record(e: PlanExecution, moves: Sequence[PlanMove],
                     planned_bytes: object = None) -> ExecutionRecord:
    """Reads only the row and the plan's moves: the executor builds it off the tick's thread."""
    return ExecutionRecord(
        state=e.state, applied_by=e.created_by, started_at=_iso(e.started_at),
        finished_at=_iso(e.finished_at), duration_s=e.duration_s, moves_total=e.moves_total,
        moves_done=e.moves_done, moves_failed=e.moves_failed, moves_in_flight=len(e.in_flight),
        bytes_moved=e.bytes_moved, max_moves_per_spu=e.max_moves_per_spu,
        max_moves=e.max_moves, reason=e.reason, throttle_bytes_per_s=e.throttle_bytes_per_s,
        bytes_copied=e.bytes_copied, **pace_of(e, planned_bytes),  # type: ignore[typeddict-item]
        per_spu=per_spu_progress(moves, landed_of(e), e.in_flight))


def plan_execution(record: Plan) -> ExecutionRecord | None:
    e = PlanExecution.objects.filter(plan=record).first()
    return None if e is None else execution_record(e, plan_moves(record.moves),
                                                   record.metrics.get("bytes_moved"))


def moves_with_outcome(record: Plan) -> list[dict[str, Any]]:
    """The plan's moves, each with ``outcome`` once the plan was applied (else None)."""
    e = PlanExecution.objects.filter(plan=record).first()
    if e is None:
        return [{**m, "outcome": None} for m in record.moves]
    book = MoveBook.of(len(record.moves), started=e.started, in_flight=e.in_flight,
                       landed=landed_of(e), ended=e.finished_at is not None)
    return [{**m, "outcome": state.value} for m, state in zip(record.moves, book.states)]


def plan_summary(record: Plan) -> dict[str, Any]:
    """A plan in a list: its status, what it plans and who asked when."""
    return {**plan_status(record), "name": record.name, "engine": record.engine,
            "created_by": record.created_by, "created_at": _iso(record.created_at),
            "replicas_moved": record.metrics.get("replicas_moved"),
            "lower_bound": record.metrics.get("lower_bound"), "progress": record.progress}


def plan_created(record: Plan) -> dict[str, Any]:
    """A plan as its request answers it: the summary and its cost and risk (the keys of
    ``plan rebalance --json``; null while a worker computes it)."""
    return {**plan_summary(record), "cost": record.metrics.get("cost")}


def plan_detail(record: Plan) -> dict[str, Any]:
    metrics = {k: v for k, v in record.metrics.items() if k not in ("cost", "cost_inputs")}
    return {**plan_created(record), "scenario": record.scenario, "options": record.options,
            "metrics": metrics, "before": record.before,
            "elapsed_ms": record.elapsed_ms, "execution": plan_execution(record)}


def grid_detail(record: PlanGrid) -> dict[str, Any]:
    return {"id": record.pk, "state": record.state, "engine": record.engine,
            "created_by": record.created_by, "created_at": _iso(record.created_at),
            "options": record.options, "scenarios": record.scenarios, "rows": record.rows,
            "progress": record.progress, "reason": record.reason,
            "elapsed_ms": record.elapsed_ms}


def moves_filtered(moves: Iterable[dict[str, Any]], topic: str = "",
                   spu: int | None = None) -> list[dict[str, Any]]:
    """Moves of one topic and/or touching one SPU (before or after)."""
    return [m for m in moves
            if (not topic or m["topic"] == topic)
            and (spu is None or spu in m["before"] or spu in m["after"])]


def moves_csv(record: Plan) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["topic", "partition", "before", "after", "added", "removed",
                     "leader_change"])
    for m in record.moves:
        writer.writerow([m["topic"], m["partition"], *(" ".join(map(str, m[k])) for k in
                                                       ("before", "after", "added", "removed")),
                         str(m["leader_change"]).lower()])
    return out.getvalue()


def kafka_json(record: Plan) -> str:
    return json.dumps(plan_exports(record)["kafka"], indent=2)


def fluvio_zip(record: Plan) -> bytes:
    """One Fluvio replica assignment file per topic, ``<topic>.json``."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for topic, body in plan_exports(record)["fluvio"].items():
            archive.writestr(f"{topic}.json", json.dumps(body, indent=2))
    return out.getvalue()


def _iso(moment: Any) -> str | None:
    return moment.isoformat() if moment else None
