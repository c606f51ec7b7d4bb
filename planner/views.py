"""Workbench pages: build a what-if or a grid, follow its computation, read a plan.

Views parse, call planner.services (the same use cases as the API and the
``plan`` command) and render; refusals show next to the field.
"""
from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from cluster.charts import PLOTLY_CONFIG
from cluster.templatetags.numbers import human_bytes, ratio
from cluster.models import Spu
from cluster.views._shell import (call_action, call_service, operator_required, paginate,
                                  query_without_page)
from planner import charts, core
from planner.core.jobs import GridState, PlanState
from planner.core.metrics import LAYOUT_KEYS, MOVEMENT_KEYS
from planner.follow_up import ENDED_EARLY, plan_spus_needed
from planner.forms import GridForm, PlanApplyForm, PlanForm, PlanThrottleForm
from planner.import_views import cost_context
from planner.models import Plan, PlanGrid
from planner.selectors import (fluvio_zip, kafka_json, moves_csv, moves_filtered,
                               moves_with_outcome, plan_execution, plan_status)
from planner.services import (grid_cancel, grid_request, plan_document, plan_request,
                              scenario_from_input)

MOVES_PER_PAGE = 50
GRID_COLUMNS = ["replicas_moved", "bytes_moved", "moved_to_lower_bound", "replica_spread",
                "leader_spread", "rack_violations", "failover_concentration"]


def _racks() -> list[str]:
    return sorted({r for r in Spu.objects.values_list("rack", flat=True) if r})


def workbench(request: HttpRequest, plan_form: PlanForm | None = None,
              grid_form: GridForm | None = None, status: int = 200) -> HttpResponse:
    return render(request, "planner/workbench.html", {
        "plan_form": plan_form or PlanForm(racks=_racks()),
        "grid_form": grid_form or GridForm(),
        "plans": paginate(request, Plan.objects.defer("moves", "target", "current", "before")
                          .select_related("execution"), 20),
        "grids": PlanGrid.objects.defer("rows")[:10],
        "spu_count": Spu.objects.count()}, status=status)


@require_POST
@operator_required
def plan_create_view(request: HttpRequest) -> HttpResponse:
    form = PlanForm(request.POST, racks=_racks())
    if not form.is_valid():
        return workbench(request, plan_form=form, status=400)
    data = form.cleaned_data
    scenario = call_service(form, scenario_from_input, add_spus=data["add_spu"],
                            remove_spus=data["remove_spu"], lose_racks=data["lose_rack"],
                            replication=data["replication"], name=data["name"])
    outcome = scenario.ok and call_service(form, plan_request, scenario=scenario.value,
                                           options=form.options(), engine=data["engine"],
                                           by=request.user)
    if not outcome or not outcome.ok:
        return workbench(request, plan_form=form, status=400)
    return redirect("planner:plan", plan_id=outcome.value.pk)


@require_POST
@operator_required
def grid_create_view(request: HttpRequest) -> HttpResponse:
    form = GridForm(request.POST)
    data = form.cleaned_data if form.is_valid() else None
    outcome = data is not None and call_service(
        form, grid_request, scenarios=data["scenarios"], standard=data["standard"],
        up_to=data["up_to"], options=form.options(), engine=data["engine"], by=request.user)
    if not outcome or not outcome.ok:
        return workbench(request, grid_form=form, status=400)
    return redirect("planner:grid", grid_id=outcome.value.pk)


def plan_detail(request: HttpRequest, plan_id: int, apply_form: PlanApplyForm | None = None,
                throttle_form: PlanThrottleForm | None = None) -> HttpResponse:
    record = get_object_or_404(Plan, pk=plan_id)
    status = plan_status(record)
    record_of_apply = plan_execution(record)
    context: dict[str, Any] = {"plan": record, "status": status,
                               "computing": record.state == PlanState.COMPUTING,
                               "computed": bool(record.target), "job_kind": "plan",
                               "applied": record_of_apply is not None,
                               "execution": record_of_apply,
                               "apply_form": apply_form or PlanApplyForm(),
                               "moving": status["state"] in ("running", "paused"),
                               "ended_early": status["state"] in ENDED_EARLY
                               and status["finished_at"] is not None,
                               # A cancelled plan still rolls its moves in flight back.
                               "unfinished": record_of_apply is not None
                               and record_of_apply["finished_at"] is None,
                               "rate_over_throttle": _rate_over_throttle(record_of_apply),
                               "throttle_form": throttle_form or _throttle_form(record_of_apply)}
    if context["computed"]:
        context.update(_plan_results(request, record), **cost_context(record.metrics))
        if record_of_apply is None:
            needed = plan_spus_needed(record)
            context.update(spus_needed=needed,
                           spus_unregistered=[s for s in needed if not s["registered"]])
    return render(request, "planner/plan.html", context,
                  status=400 if apply_form is not None or throttle_form is not None else 200)


def _throttle_form(execution: Any) -> PlanThrottleForm | None:
    """The running plan's throttles as they are, ready to change."""
    if not execution:
        return None
    return PlanThrottleForm(initial={key: execution[key] for key in PlanThrottleForm.base_fields})


def _plan_results(request: HttpRequest, record: Plan) -> dict[str, Any]:
    topic = request.GET.get("topic", "")
    spu = request.GET.get("spu", "")
    spu_id = int(spu) if spu.isdigit() else None
    moves = moves_filtered(moves_with_outcome(record), topic, spu_id)
    return {"metric_rows": _metric_rows(record), "movement": _movement(record),
            "panels": _panels(record), "plotly_config": PLOTLY_CONFIG,
            "moves": paginate(request, moves, MOVES_PER_PAGE), "query": query_without_page(request),
            "topics": sorted(record.target), "topic": topic, "spu": spu,
            "spu_ids": sorted({s["id"] for s in record.current.get("spus", [])}
                              | {s["id"] for s in record.scenario.get("add_spus", [])})}


def _rate_over_throttle(execution: Any) -> bool:
    """The average copy rate can run ahead of the byte throttle (a copy larger than a
    burst starts whole): the page then says why instead of showing it bare."""
    if not execution:
        return False
    rate, throttle = execution.get("bytes_per_s"), execution.get("throttle_bytes_per_s")
    return bool(rate and throttle and rate > throttle)


def _metric_rows(record: Plan) -> list[tuple[str, str, str]]:
    return [(key, _shown(key, record.before.get(key)), _shown(key, record.metrics.get(key)))
            for key in LAYOUT_KEYS]


def _movement(record: Plan) -> list[tuple[str, str]]:
    """Bytes in KiB/MiB/GiB, ratios with two decimals (not 0.6666666666666666)."""
    return [(key, _shown(key, record.metrics.get(key))) for key in MOVEMENT_KEYS]


def _panels(record: Plan) -> list[dict[str, Any]]:
    """Before and after side by side: rack x SPU replicas and leaders, topic x SPU."""
    return [{"id": f"{name}-{side}", "script_id": f"fig-{name}-{side}", "fig": fig}
            for name, pair in _figures(record).items()
            for side, fig in zip(("before", "after"), pair)]


def _figures(record: Plan) -> dict[str, list[Any]]:
    current = core.cluster_from_dict(record.current)
    plan = core.plan_from_dict(plan_document(record))
    after_spus = core.apply_scenario(current, plan.scenario).spus
    every = {s.id: s for s in (*current.spus, *plan.scenario.add_spus)}
    sides = [charts.Side("Before", {t.name: t.replicas for t in current.topics},
                         frozenset(s.id for s in current.spus)),
             charts.Side("After", plan.target, frozenset(s.id for s in after_spus))]
    racks = charts.racks_of(list(every.values()))
    return {"replicas": charts.rack_spu_pair(racks, sides, "replicas"),
            "leaders": charts.rack_spu_pair(racks, sides, "leaders"),
            "topics": charts.topic_spu_pair(sorted(every), sides)}


def grid_detail(request: HttpRequest, grid_id: int) -> HttpResponse:
    record = get_object_or_404(PlanGrid, pk=grid_id)
    rows = [_grid_row(row, record) for row in record.rows]
    return render(request, "planner/grid.html", {
        "grid": record, "rows": rows, "columns": GRID_COLUMNS, "job_kind": "grid",
        "computing": record.state == GridState.COMPUTING,
        "scatter": charts.grid_scatter(record.rows) if record.rows else None,
        "plotly_config": PLOTLY_CONFIG})


def _grid_row(row: dict[str, Any], grid: PlanGrid) -> dict[str, Any]:
    """A table row: (value to sort by, ours, Kafka's) per column, and the fields that plan
    its scenario. Bytes read in KiB/MiB/GiB, ratios with two decimals."""
    kafka = row.get("kafka") or {}
    cells = [(_rounded(row.get(c)), _shown(c, row.get(c)), _shown(c, kafka.get(c)))
             for c in GRID_COLUMNS]
    return {**row, "cells": cells, "hidden": _plan_fields(grid.scenarios[row["index"]],
                                                          grid.options, grid.engine)}


def _plan_fields(scenario: dict[str, Any], options: dict[str, Any],
                 engine: str) -> list[tuple[str, str]]:
    """The PlanForm fields that ask for ``scenario`` again (the grid's "Plan this")."""
    adds = ", ".join(f"{s['id']}:{s['rack']}" if s.get("rack") else str(s["id"])
                     for s in scenario.get("add_spus", []))
    fields = [("name", scenario.get("name", "")), ("add_spu", adds),
              ("remove_spu", ", ".join(map(str, scenario.get("remove_spus", [])))),
              ("replication", ", ".join(f"{t}:{rf}" for t, rf
                                        in scenario.get("replication", {}).items())),
              ("engine", engine)]
    fields += [("lose_rack", rack) for rack in scenario.get("lose_racks", [])]
    flags = {"anti_affinity": "anti_affinity", "balance_leaders": "leader_balance",
             "optimise_order": "order_optimisation"}
    return fields + [(flags[k], "on") for k, on in options.items() if on and k in flags]


def _rounded(value: object) -> object:
    return round(value, 3) if isinstance(value, float) else value


def _shown(column: str, value: object) -> str:
    return human_bytes(value) if column == "bytes_moved" else ratio(value)


@require_POST
@operator_required
def grid_cancel_view(request: HttpRequest, grid_id: int) -> HttpResponse:
    refusal = call_action(request, grid_cancel, f"Grid {grid_id} cancelled.", grid_id=grid_id)
    if refusal:
        messages.error(request, refusal)
    return redirect("planner:grid", grid_id=grid_id)


def _download(body: str | bytes, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(body, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _computed(plan_id: int) -> Plan:
    return get_object_or_404(Plan.objects.exclude(target={}), pk=plan_id)


def plan_kafka_json(request: HttpRequest, plan_id: int) -> HttpResponse:
    return _download(kafka_json(_computed(plan_id)), "application/json",
                     f"plan-{plan_id}-reassignment.json")


def plan_fluvio_zip(request: HttpRequest, plan_id: int) -> HttpResponse:
    return _download(fluvio_zip(_computed(plan_id)), "application/zip",
                     f"plan-{plan_id}-fluvio.zip")


def plan_moves_csv(request: HttpRequest, plan_id: int) -> HttpResponse:
    return _download(moves_csv(_computed(plan_id)), "text/csv", f"plan-{plan_id}-moves.csv")
