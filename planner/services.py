"""Planner use cases: read the layout, plan, store the plan, export it."""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.conf import settings
from django.db import transaction

from cluster.services.waiting import worker_running
from cluster.errors import Conflict, InvalidInput, NotFound
from cluster.services.events import Actor, actor_name, log_event
from planner import core
from planner.bytes_plans import add_cost, planning_input
from planner.core.bytes_balance import ByteOptions
from planner.core.grid import scenario_row
from planner.core.jobs import (Cancelled, EngineChoice, GridState, PlanState, Stage,
                               choose_engine, estimate)
from planner.core.planner import Mapper
from planner.live import Kind, publish_progress
from planner.models import Plan, PlanGrid
from planner.progress import Reporter
from planner.inputs import (PartitionState, _checked,  # noqa: F401 (re-exported)
                            cluster_from_kafka_json, cluster_from_store, partition_state,
                            scenario_from_input)


def run_plan(cluster: core.Cluster, scenario: core.Scenario, options: core.Options,
             engine: str = "local") -> core.Plan:
    _check_engine(engine)
    if engine == "spark":
        from planner.spark import plan_distributed, spark_session

        spark = spark_session(settings.SPARK_MASTER)
        return _checked(lambda: plan_distributed(spark, cluster, scenario, options))
    return _checked(lambda: core.plan(cluster, scenario, options))


@transaction.atomic
def plan_create(*, scenario: core.Scenario, options: core.Options, engine: str = "local",
                kafka_json: str | dict | None = None, by: Actor = None,
                throttle: int | None = None, max_moves_per_spu: int | None = None) -> Plan:
    """Plan a what-if against the store (or a Kafka file) and store the plan, with its cost
    and risk (the ETA under ``throttle`` bytes/s and ``max_moves_per_spu``)."""
    cluster = cluster_from_kafka_json(kafka_json) if kafka_json is not None else cluster_from_store()
    started = time.perf_counter()
    result = run_plan(cluster, scenario, options, engine)
    data = core.plan_to_dict(result)
    record = Plan.objects.create(
        created_by=actor_name(by), name=scenario.name, engine=engine,
        source=Plan.Source.KAFKA_JSON if kafka_json is not None else Plan.Source.STORE,
        scenario=data["scenario"], options=data["options"], metrics=result.metrics,
        before=dict(result.before), moves=data["moves"], target=data["target"],
        current=core.cluster_to_dict(cluster),
        elapsed_ms=int((time.perf_counter() - started) * 1000))
    log_event(by, "plan", record.pk, "create",
              {"scenario": data["scenario"], "engine": engine},
              result=f"{result.metrics.get('replicas_moved')} replicas moved")
    return add_cost(record, throttle, max_moves_per_spu)


def plan_grid(*, scenarios: Sequence[core.Scenario] | None = None, options: core.Options,
              engine: str = "local", up_to: int = 3,
              by_bytes: ByteOptions | None = None) -> list[dict[str, Any]]:
    """Scenario x metrics for a grid (default: every SPU removal, rack loss, rack growth);
    each a plan by bytes where ``by_bytes`` is given (the store with its imported sizes
    and capacities, as ``plan rebalance --balance bytes``)."""
    _check_engine(engine)
    cluster = cluster_from_store()
    if by_bytes is not None:
        cluster, capacities, _, _ = planning_input(None)
        by_bytes = replace(by_bytes, capacities={**capacities, **by_bytes.capacities})
        if not any(any(t.sizes) for t in cluster.topics if t.sizes):
            raise InvalidInput("--balance bytes needs partition sizes: import them (cluster "
                               "import --kafka-log-dirs)", field="balance")
    grid = list(scenarios) if scenarios is not None else core.standard_grid(cluster, up_to)
    if engine == "spark":
        from planner.spark import evaluate_grid, spark_session

        spark = spark_session(settings.SPARK_MASTER)
        return _checked(lambda: evaluate_grid(spark, cluster, grid, options,
                                              by_bytes=by_bytes))
    return [scenario_row(cluster, s, options, by_bytes) for s in grid]


def _check_engine(engine: str) -> None:
    if engine not in Plan.Engine.values:
        raise InvalidInput(f"engine {engine!r} must be local or spark", field="engine")


def plan_document(record: Plan) -> dict[str, Any]:
    """The CLI's --json shape: moves, metrics (with before), target; a plan's cost and
    risk (planner/bytes_plans.py), where computed, at the top."""
    metrics = {k: v for k, v in record.metrics.items() if k not in ("cost", COST_INPUTS)}
    return {"id": record.pk, "scenario": record.scenario, "options": record.options,
            "moves": record.moves, "metrics": {**metrics, "before": record.before},
            "target": record.target, **record.metrics.get("cost", {})}


def plan_exports(record: Plan) -> dict[str, Any]:
    """Kafka reassignment JSON and one Fluvio assignment file per topic."""
    plan = core.plan_from_dict(plan_document(record))
    return {"kafka": core.kafka_reassignment(plan), "fluvio": core.fluvio_assignments(plan)}


# --- The workbench: plans and grids as jobs (a Celery task when a worker runs) ---

MAX_GRID_SCENARIOS = 2000
# A queued plan keeps the throttles its cost assumes here until the worker computes it.
COST_INPUTS = "cost_inputs"


def plan_request(*, scenario: core.Scenario, options: core.Options,
                 engine: str = EngineChoice.AUTO, by: Actor = None,
                 throttle: int | None = None, max_moves_per_spu: int | None = None) -> Plan:
    """Check a what-if against the store, then plan it: queued for the worker when
    one runs (state computing), otherwise here and now (state pending). Either way the
    plan carries its cost and risk (the ETA under the throttles given)."""
    cluster = cluster_from_store()
    _checked(lambda: core.prepare(cluster, scenario, options))
    chosen = _engine(engine, _partitions(cluster))
    if not worker_running():
        return plan_create(scenario=scenario, options=options, engine=chosen, by=by,
                           throttle=throttle, max_moves_per_spu=max_moves_per_spu)
    with transaction.atomic():
        record = Plan.objects.create(
            created_by=actor_name(by), name=scenario.name, engine=chosen,
            scenario=core.scenario_to_dict(scenario), options=core.options_to_dict(options),
            metrics={COST_INPUTS: {"throttle": throttle, "max_moves_per_spu": max_moves_per_spu}},
            current=core.cluster_to_dict(cluster), state=PlanState.COMPUTING,
            progress=estimate(Stage.QUEUED, 0, 1, 0.0).as_dict())
        log_event(by, "plan", record.pk, "request", {"scenario": record.scenario,
                                                     "engine": chosen})
        transaction.on_commit(lambda: _enqueue("planner.tasks.compute_plan", record))
    return record


def plan_compute(*, plan_id: int) -> Plan:
    """Run a queued plan (the Celery task's body); a cancel stops it between topics."""
    record = Plan.objects.get(pk=plan_id)
    if record.state != PlanState.COMPUTING:
        return record
    report = Reporter("plan", plan_id, job_progress_record)
    started = time.perf_counter()
    try:
        report(Stage.PREPARING, 0, 1)
        cluster = core.cluster_from_dict(record.current)
        result = core.plan(cluster, core.scenario_from_dict(record.scenario),
                           core.options_from_dict(record.options),
                           mapper=report.mapper(_engine_mapper(record.engine)))
        report(Stage.STORING, 0, 1)
    except Cancelled:
        return Plan.objects.get(pk=plan_id)
    except (core.PlanError, InvalidInput) as exc:
        return _job_failed(Plan, "plan", plan_id, str(exc))
    except Exception as exc:
        # A crash must not leave the plan "computing" for ever; the task still reports it.
        _job_failed(Plan, "plan", plan_id, f"the planner stopped: {exc!r}")
        raise
    return _plan_store(plan_id, result, int((time.perf_counter() - started) * 1000))


@transaction.atomic
def _plan_store(plan_id: int, result: core.Plan, elapsed_ms: int) -> Plan:
    record = Plan.objects.select_for_update().get(pk=plan_id)
    if record.state != PlanState.COMPUTING:
        return record
    data = core.plan_to_dict(result)
    inputs = record.metrics.get(COST_INPUTS) or {}
    record.metrics, record.before = result.metrics, dict(result.before)
    record.moves, record.target = data["moves"], data["target"]
    record.elapsed_ms, record.state = elapsed_ms, PlanState.PENDING
    record.progress = estimate(Stage.STORING, 1, 1, elapsed_ms / 1000).as_dict()
    record.save()
    add_cost(record, inputs.get("throttle"), inputs.get("max_moves_per_spu"))
    log_event(None, "plan", plan_id, "computed",
              result=f"{result.metrics.get('replicas_moved')} replicas moved")
    _announce_after_commit("plan", record)
    return record


def plan_cancel(*, plan_id: int, by: Actor = None) -> Plan:
    """Stop a plan being computed; nothing of it is stored."""
    return _job_cancel(Plan, "plan", plan_id, by)


def grid_request(*, scenarios: Sequence[core.Scenario] | None = None, up_to: int = 3,
                 standard: bool | None = None, options: core.Options,
                 engine: str = EngineChoice.AUTO, by: Actor = None) -> PlanGrid:
    """A grid of what-ifs, each with our plan's metrics and Kafka ``--generate``'s, queued
    or computed here. ``standard`` (by default: when no scenario is given) adds every
    SPU removal, rack loss and rack growth by 1..up_to SPUs."""
    cluster = cluster_from_store()
    grid = list(scenarios or ())
    if standard or (standard is None and not grid):
        grid += core.standard_grid(cluster, up_to)
    if not grid or len(grid) > MAX_GRID_SCENARIOS:
        raise InvalidInput(f"a grid needs 1 to {MAX_GRID_SCENARIOS} scenarios, not {len(grid)}",
                           field="scenarios")
    chosen = _engine(engine, _partitions(cluster) * len(grid))
    record = PlanGrid.objects.create(
        created_by=actor_name(by), engine=chosen, options=core.options_to_dict(options),
        scenarios=[core.scenario_to_dict(s) for s in grid],
        progress=estimate(Stage.QUEUED, 0, 1, 0.0).as_dict())
    if worker_running():
        transaction.on_commit(lambda: _enqueue("planner.tasks.compute_grid", record))
        return record
    return grid_compute(grid_id=record.pk)


def grid_compute(*, grid_id: int) -> PlanGrid:
    record = PlanGrid.objects.get(pk=grid_id)
    if record.state != GridState.COMPUTING:
        return record
    report = Reporter("grid", grid_id, job_progress_record)
    started = time.perf_counter()
    try:
        rows = _grid_rows(record, report)
    except Cancelled:
        return PlanGrid.objects.get(pk=grid_id)
    except (core.PlanError, InvalidInput) as exc:
        return _job_failed(PlanGrid, "grid", grid_id, str(exc))
    except Exception as exc:
        _job_failed(PlanGrid, "grid", grid_id, f"the planner stopped: {exc!r}")
        raise
    updated = PlanGrid.objects.filter(pk=grid_id, state=GridState.COMPUTING).update(
        rows=rows, state=GridState.DONE, elapsed_ms=int((time.perf_counter() - started) * 1000),
        progress=estimate(Stage.STORING, 1, 1, 0.0).as_dict())
    record = PlanGrid.objects.get(pk=grid_id)
    if updated:
        publish_progress("grid", grid_id, record.state, record.progress)
    return record


def _grid_rows(record: PlanGrid, report: Reporter) -> list[dict[str, Any]]:
    cluster = cluster_from_store()
    options = core.options_from_dict(record.options)
    scenarios = [core.scenario_from_dict(s) for s in record.scenarios]
    if record.engine == EngineChoice.SPARK:
        report(Stage.SCENARIOS, 0, 1)
        from planner.spark import evaluate_grid, spark_session

        ours = evaluate_grid(spark_session(settings.SPARK_MASTER), cluster, scenarios, options)
    else:
        ours = []
        for done, scenario in enumerate(scenarios):
            report(Stage.SCENARIOS, done, 2 * len(scenarios))
            ours.append(scenario_row(cluster, scenario, options))
    rows = []
    for done, (scenario, row) in enumerate(zip(scenarios, ours)):
        report(Stage.SCENARIOS, len(scenarios) + done, 2 * len(scenarios))
        rows.append({**row, "index": done, "kafka": kafka_cost(cluster, scenario, options)})
    return rows


def kafka_cost(cluster: core.Cluster, scenario: core.Scenario,
               options: core.Options) -> dict[str, Any] | None:
    """The same scenario under ``kafka-reassign-partitions --generate``; None if it fails."""
    try:
        metrics = core.generate_plan(cluster, scenario, options).metrics
    except core.PlanError:
        return None
    return {k: metrics.get(k) for k in KAFKA_COST_KEYS}


KAFKA_COST_KEYS = ("replicas_moved", "bytes_moved", "moved_to_lower_bound", "replica_spread",
                   "leader_spread", "rack_violations", "failover_concentration")


def grid_cancel(*, grid_id: int, by: Actor = None) -> PlanGrid:
    return _job_cancel(PlanGrid, "grid", grid_id, by)


def job_progress_record(kind: Kind, pk: int, progress: dict[str, object]) -> str:
    """Store a running job's progress; answers its state (a cancel shows here)."""
    model = Plan if kind == "plan" else PlanGrid
    model.objects.filter(pk=pk, state=PlanState.COMPUTING).update(progress=progress)
    return model.objects.filter(pk=pk).values_list("state", flat=True).first() or ""


@transaction.atomic
def _job_cancel(model: type, kind: Kind, pk: int, by: Actor):
    record = model.objects.select_for_update().filter(pk=pk).first()
    if record is None:
        raise NotFound(f"{kind} {pk} not found")
    if record.state != PlanState.COMPUTING:
        raise Conflict(f"{kind} {pk} is {record.state}: only a {kind} being computed can be "
                       f"cancelled (cancelling an applied plan arrives with plan apply)",
                       details={"state": record.state})
    record.state, record.reason = PlanState.CANCELLED, f"cancelled by {actor_name(by)}"
    record.save(update_fields=["state", "reason"])
    log_event(by, kind, pk, "cancel")
    _announce_after_commit(kind, record)
    return record


def _job_failed(model: type, kind: Kind, pk: int, reason: str):
    model.objects.filter(pk=pk, state=PlanState.COMPUTING).update(state=PlanState.FAILED,
                                                                  reason=reason)
    record = model.objects.get(pk=pk)
    publish_progress(kind, pk, record.state, record.progress, record.reason)
    return record


def _announce_after_commit(kind: Kind, record: Any) -> None:
    transaction.on_commit(lambda: publish_progress(kind, record.pk, record.state,
                                                   record.progress, record.reason))


def _enqueue(task: str, record: Any) -> None:
    from webapp.celery import app

    result = app.send_task(task, args=[record.pk])
    type(record).objects.filter(pk=record.pk).update(task_id=result.id)


def _engine(choice: str, work: int) -> str:
    try:
        engine = EngineChoice(choice)
    except ValueError:
        raise InvalidInput(f"engine {choice!r} must be auto, local or spark",
                           field="engine") from None
    return choose_engine(engine, work, settings.PLANNER_SPARK_PARTITIONS).value


def _engine_mapper(engine: str) -> Mapper:
    if engine != EngineChoice.SPARK:
        return core.local_map
    from planner.spark import spark_mapper, spark_session

    return spark_mapper(spark_session(settings.SPARK_MASTER))


def _partitions(cluster: core.Cluster) -> int:
    return sum(t.partitions for t in cluster.topics)
