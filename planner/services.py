"""Planner use cases: read the layout, plan, store the plan, export it."""
from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from django.conf import settings
from django.db import transaction

from cluster.errors import InvalidInput
from cluster.models import Spu as SpuRow
from cluster.models import Topic as TopicRow
from cluster.services.events import Actor, actor_name, log_event
from planner import core
from planner.core.grid import scenario_row
from planner.models import Plan


def cluster_from_store() -> core.Cluster:
    """SPUs and provisioned topics of the store, as the planner sees them."""
    spus = tuple(core.Spu(spu_id, rack or None)
                 for spu_id, rack in SpuRow.objects.order_by("id").values_list("id", "rack"))
    topics = tuple(core.Topic(name, tuple(tuple(r) for r in replica_map))
                   for name, replica_map in TopicRow.objects.filter(resolution="Provisioned")
                   .order_by("name").values_list("name", "replica_map") if replica_map)
    return _checked(lambda: core.Cluster(spus, topics))


def cluster_from_kafka_json(document: str | dict) -> core.Cluster:
    """The layout of a Kafka reassignment file; its brokers must be registered SPUs."""
    store = cluster_from_store()
    layout = _checked(lambda: core.parse_kafka_reassignment(document, store.spus))
    unknown = sorted({s.id for s in layout.spus} - {s.id for s in store.spus})
    if unknown:
        raise InvalidInput(f"broker id{'s' if len(unknown) > 1 else ''} "
                           f"{', '.join(map(str, unknown))} in the file "
                           f"{'are' if len(unknown) > 1 else 'is'} not a registered SPU",
                           field="file", details={"unknown_spus": unknown})
    return layout


def scenario_from_input(*, add_spus: Sequence[str] = (), remove_spus: Sequence[int] = (),
                        lose_racks: Sequence[str] = (), replication: Sequence[str] = (),
                        name: str = "") -> core.Scenario:
    """Parse CLI/form spellings: ``ID:RACK`` additions, ``TOPIC:RF`` changes."""
    added = tuple(_added_spu(text) for text in add_spus)
    changes = tuple(_replication_change(text) for text in replication)
    label = name or _scenario_label(added, remove_spus, lose_racks, changes)
    return core.Scenario(label, added, tuple(remove_spus), tuple(lose_racks), changes)


def _added_spu(text: str) -> core.Spu:
    spu_id, _, rack = text.partition(":")
    if not spu_id.isdigit():
        raise InvalidInput(f"--add-spu {text!r} must be ID or ID:RACK", field="add_spu")
    return core.Spu(int(spu_id), rack or None)


def _replication_change(text: str) -> tuple[str, int]:
    topic, _, factor = text.rpartition(":")
    if not topic or not factor.isdigit() or int(factor) < 1:
        raise InvalidInput(f"replication change {text!r} must be TOPIC:FACTOR", field="replication")
    return topic, int(factor)


def _scenario_label(added: Sequence[core.Spu], removed: Sequence[int],
                    racks: Sequence[str], changes: Sequence[tuple[str, int]]) -> str:
    where = [f"{s.id}@{s.rack or '-'}" for s in added]
    parts = [f"add {', '.join(where)}" if added else "",
             f"remove {', '.join(map(str, removed))}" if removed else "",
             f"lose {', '.join(racks)}" if racks else "",
             ", ".join(f"{t} rf {rf}" for t, rf in changes)]
    return "; ".join(p for p in parts if p) or "rebalance"


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
                kafka_json: str | dict | None = None, by: Actor = None) -> Plan:
    """Plan a what-if against the store (or a Kafka file) and store the plan."""
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
    return record


def plan_grid(*, scenarios: Sequence[core.Scenario] | None = None, options: core.Options,
              engine: str = "local", up_to: int = 3) -> list[dict[str, Any]]:
    """Scenario x metrics for a grid (default: every SPU removal, rack loss, rack growth)."""
    _check_engine(engine)
    cluster = cluster_from_store()
    grid = list(scenarios) if scenarios is not None else core.standard_grid(cluster, up_to)
    if engine == "spark":
        from planner.spark import evaluate_grid, spark_session

        spark = spark_session(settings.SPARK_MASTER)
        return _checked(lambda: evaluate_grid(spark, cluster, grid, options))
    return [scenario_row(cluster, s, options) for s in grid]


def _check_engine(engine: str) -> None:
    if engine not in Plan.Engine.values:
        raise InvalidInput(f"engine {engine!r} must be local or spark", field="engine")


def plan_document(record: Plan) -> dict[str, Any]:
    """The CLI's --json shape: moves, metrics (with before), target."""
    return {"id": record.pk, "scenario": record.scenario, "options": record.options,
            "moves": record.moves, "metrics": {**record.metrics, "before": record.before},
            "target": record.target}


def plan_exports(record: Plan) -> dict[str, Any]:
    """Kafka reassignment JSON and one Fluvio assignment file per topic."""
    plan = core.plan_from_dict(plan_document(record))
    return {"kafka": core.kafka_reassignment(plan), "fluvio": core.fluvio_assignments(plan)}


def _checked(build):
    try:
        return build()
    except core.PlanError as exc:
        raise InvalidInput(str(exc), details={"planner": str(exc)}) from None
