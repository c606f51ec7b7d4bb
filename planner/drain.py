"""Draining an SPU: a dry run first, then a stored plan applied with the operator's throttle.

Cruise Control's remove_broker: ``drain_preview`` lists every move and stores
nothing (``spu drain N --dry-run``, the drain page); ``spu_drain`` stores the
drain as a plan and applies it (planner/execution.py), refused when the
cluster changed since the preview the operator read (``expect``). Only the
drained SPU's replicas move (planner/core/drain.py). The drain lives in the
planner app; the cluster's ``spu`` command gets its ``drain`` action when the
planner app starts (planner/management/spu_drain.py).
"""
from __future__ import annotations

import hashlib
import json
import time
from typing import Any, TypedDict

from django.db import transaction

from cluster.core.spus import SpuResolution
from cluster.errors import Conflict, InvalidInput
from cluster.models import Spu as SpuRow
from cluster.services.events import Actor, actor_name, log_event
from planner import core
from planner.core.drain import drain_plan
from planner.execution import plan_apply
from planner.models import Plan, PlanExecution
from planner.services import cluster_from_store


class DrainPreview(TypedDict):
    """``spu drain N --dry-run --json``: what the drain would do; nothing is stored."""
    spu: int
    dry_run: bool
    replicas: int
    leader_changes: int
    moves: list[dict[str, Any]]
    metrics: dict[str, Any]
    fingerprint: str


def drain_preview(*, spu_id: int) -> DrainPreview:
    """Every move the drain of ``spu_id`` makes, computed from the store as it is now."""
    _, result = _drain(spu_id)
    data = core.plan_to_dict(result)
    return DrainPreview(spu=spu_id, dry_run=True, replicas=len(result.moves),
                        leader_changes=sum(m.leader_change for m in result.moves),
                        moves=data["moves"], metrics=data["metrics"],
                        fingerprint=fingerprint(data["moves"]))


def fingerprint(moves: list[dict[str, Any]]) -> str:
    """Names one list of moves, so an apply can insist on the preview the operator read."""
    text = json.dumps(moves, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _drain(spu_id: int) -> tuple[core.Cluster, core.Plan]:
    if not SpuRow.objects.filter(pk=spu_id).exists():
        raise InvalidInput(f"SPU {spu_id} is not registered", field="spu_id")
    cluster = cluster_from_store()
    offline = SpuRow.objects.exclude(resolution=SpuResolution.ONLINE.value).values_list(
        "id", flat=True)
    try:
        return cluster, drain_plan(cluster, spu_id, unavailable=set(offline))
    except core.PlanError as exc:
        raise InvalidInput(str(exc), field="spu_id", details={"planner": str(exc)}) from None


@transaction.atomic
def plan_drain(*, spu_id: int, expect: str | None = None, by: Actor = None) -> Plan:
    """Store the drain of ``spu_id`` as a plan (refused if it is not the preview ``expect``)."""
    started = time.perf_counter()
    cluster, result = _drain(spu_id)
    data = core.plan_to_dict(result)
    if expect is not None and fingerprint(data["moves"]) != expect:
        raise Conflict(f"the cluster changed since the preview of the drain of SPU {spu_id}: "
                       "read the new preview before applying", field="spu_id")
    record = Plan.objects.create(
        created_by=actor_name(by), name=result.scenario.name, engine=Plan.Engine.LOCAL,
        source=Plan.Source.DRAIN, scenario=data["scenario"], options=data["options"],
        metrics=dict(result.metrics), before=dict(result.before), moves=data["moves"],
        target=data["target"], current=core.cluster_to_dict(cluster),
        elapsed_ms=int((time.perf_counter() - started) * 1000))
    log_event(by, "plan", record.pk, "create", {"scenario": data["scenario"], "drain": spu_id},
              result=f"{len(result.moves)} replicas of SPU {spu_id} moved")
    return record


@transaction.atomic
def spu_drain(*, spu_id: int, max_moves_per_spu: int | None = None,
              max_moves: int | None = None, throttle_bytes_per_s: int | None = None,
              expect: str | None = None, by: Actor = None) -> PlanExecution:
    """Store the drain and apply it: afterwards the SPU holds no replica."""
    plan = plan_drain(spu_id=spu_id, expect=expect, by=by)
    return plan_apply(plan_id=plan.pk, max_moves_per_spu=max_moves_per_spu,
                      max_moves=max_moves, throttle_bytes_per_s=throttle_bytes_per_s, by=by)
