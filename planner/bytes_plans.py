"""Plans by bytes against the store (with the sizes a store import brought) or a planning
snapshot (``cluster import --plan-only``), and every plan's cost and risk.

The cost and risk are stored in the plan's metrics under ``cost`` and ``risk`` and shown
at the top of the plan document (``plan rebalance --json``), for count plans as well.
Moves are stored in an execution order where no SPU passes its disk limit mid-way.
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from django.db import transaction

from cluster.errors import InvalidInput, NotFound
from cluster.models import Topic as TopicRow
from cluster.services.events import Actor, actor_name, log_event
from planner import core
from planner.core.bytes_balance import ByteOptions, plan_bytes
from planner.core.cost import cost_summary, execution_order
from planner.core.risk import risk_before_after
from planner.inputs import _checked, cluster_from_store
from planner.models import ClusterImport, Plan


def parse_capacities(texts: list[str]) -> dict[int, int]:
    """``SPU:BYTES`` pairs (``--capacity``)."""
    out = {}
    for text in texts:
        spu, _, size = text.partition(":")
        if not spu.isdigit() or not size.isdigit() or int(size) == 0:
            raise InvalidInput(f"--capacity {text!r} must be SPU:BYTES (a positive number "
                               f"of bytes)", field="capacity")
        out[int(spu)] = int(size)
    return out


def planning_input(snapshot_id: int | None) -> tuple[core.Cluster, dict[int, int],
                                                       dict[str, int], str]:
    """The cluster, disk capacities, min LRS per topic, and the plan's source."""
    if snapshot_id is not None:
        record = ClusterImport.objects.filter(pk=snapshot_id).first()
        if record is None:
            raise NotFound(f"import {snapshot_id} not found", field="snapshot")
        return (_checked(lambda: core.cluster_from_dict(record.current)),
                {int(k): v for k, v in record.capacities.items()}, dict(record.min_insync),
                str(Plan.Source.KAFKA_IMPORT))
    cluster = cluster_from_store()
    min_lrs = dict(TopicRow.objects.values_list("name", "min_lrs"))
    imported = ClusterImport.objects.filter(stored=True).first()
    if imported is None:
        return cluster, {}, min_lrs, str(Plan.Source.STORE)
    return (_with_sizes(cluster, core.cluster_from_dict(imported.current)),
            {int(k): v for k, v in imported.capacities.items()}, min_lrs, str(Plan.Source.STORE))


def _with_sizes(cluster: core.Cluster, imported: core.Cluster) -> core.Cluster:
    """The store's layout with the imported sizes of the topics the import stored (the
    store's own sizes are the simulator's records, not a real cluster's bytes)."""
    sizes = {t.name: t.sizes for t in imported.topics if t.sizes}
    topics = tuple(core.Topic(t.name, t.replicas, sizes[t.name], t.leaders)
                   if len(sizes.get(t.name) or ()) == t.partitions else t
                   for t in cluster.topics)
    return core.Cluster(cluster.spus, topics)


def cost_and_risk(cluster: core.Cluster, result: core.Plan, min_lrs: Mapping[str, int],
                  throttle: float | None, per_spu_moves: int | None) -> dict[str, Any]:
    leaders = {t.name: t.current_leaders for t in cluster.topics}
    rack_of = {s.id: s.rack for s in cluster.spus}
    rack_of.update({s.id: s.rack for s in result.scenario.add_spus})
    before = {t.name: t.replicas for t in cluster.topics}
    return {**cost_summary(result.moves, cluster.topics, leaders, throttle, per_spu_moves),
            "risk": risk_before_after(before, result.target, rack_of, min_lrs, leaders)}


@transaction.atomic
def plan_create_bytes(*, scenario: core.Scenario, options: core.Options, opts: ByteOptions,
                      throttle: int | None = None, max_moves_per_spu: int | None = None,
                      snapshot_id: int | None = None, by: Actor = None) -> Plan:
    cluster, capacities, min_lrs, source = planning_input(snapshot_id)
    opts = ByteOptions(opts.max_disk_percent, {**capacities, **opts.capacities}, opts.topics,
                       opts.exclude_topics, opts.leaders_only, opts.band)
    started = time.perf_counter()
    result = _checked(lambda: plan_bytes(cluster, scenario, options, opts))
    result = _in_execution_order(cluster, result, opts)
    data = core.plan_to_dict(result)
    extra = cost_and_risk(cluster, result, min_lrs, throttle, max_moves_per_spu)
    record = Plan.objects.create(
        created_by=actor_name(by), name=f"{scenario.name} by bytes", engine="local",
        source=source, scenario=data["scenario"], options=data["options"],
        metrics={**result.metrics, "cost": extra}, before=dict(result.before),
        moves=data["moves"], target=data["target"], current=core.cluster_to_dict(cluster),
        elapsed_ms=int((time.perf_counter() - started) * 1000))
    log_event(by, "plan", record.pk, "create", {"scenario": data["scenario"], "balance": "bytes"},
              result=f"{extra['bytes_moved']:,} bytes moved")
    return record


def _in_execution_order(cluster: core.Cluster, result: core.Plan,
                        opts: ByteOptions) -> core.Plan:
    sizes = {t.name: t.sizes or (0,) * t.partitions for t in cluster.topics}
    loads: dict[int, int] = {}
    for topic in cluster.topics:
        for pid, reps in enumerate(topic.replicas):
            for spu in reps:
                loads[spu] = loads.get(spu, 0) + sizes[topic.name][pid]
    limits = {s: c * opts.max_disk_percent / 100 for s, c in opts.capacities.items()}
    order = execution_order(result.moves, sizes, loads, limits)
    if order is None:
        raise InvalidInput("no order of the moves keeps every SPU under --max-disk-percent "
                           f"{opts.max_disk_percent} while they run", field="max_disk_percent")
    return core.Plan(result.scenario, result.options, result.target,
                     tuple(result.moves[i] for i in order), result.metrics, result.before)


def add_cost(record: Plan, throttle: int | None, max_moves_per_spu: int | None) -> Plan:
    """Cost and risk of a count plan, stored beside its metrics."""
    cluster = core.cluster_from_dict(record.current)
    result = core.plan_from_dict({"scenario": record.scenario, "options": record.options,
                                  "moves": record.moves, "metrics": record.metrics,
                                  "target": record.target})
    min_lrs = dict(TopicRow.objects.values_list("name", "min_lrs"))
    record.metrics = {**record.metrics,
                      "cost": cost_and_risk(cluster, result, min_lrs, throttle,
                                            max_moves_per_spu)}
    record.save(update_fields=["metrics"])
    return record
