"""What comes around carrying a plan out: the SPUs it adds, its rollback file, its rest.

A plan that adds SPUs walks the operator through register -> bring online ->
apply (``plan_spus_needed``, ``plan_register_spus``, ``plan_online_spus``),
with the cluster's own services. Before apply, the rollback file is today's
assignment of the partitions the plan moves (``plan_rollback``). A plan that
ended before its last move (cancelled, failed) can be planned again from the
cluster as it now is (``plan_rest``): a new plan, previewed before apply.
"""
from __future__ import annotations

from typing import Any, TypedDict

from django.db import transaction

from cluster.core.spus import SpuResolution
from cluster.core.topic_controller import TopicResolution
from cluster.errors import Conflict, NotFound
from cluster.models import Spu, Topic
from cluster.services.events import Actor
from cluster.services.outages import settle_outage, spu_online
from cluster.services.spus import spu_register
from planner import core
from planner.core.execution import ExecutionState, plan_moves, rollback_reassignment
from planner.drain import plan_drain
from planner.models import Plan, PlanExecution
from planner.services import plan_request

# A plan these states ended in left moves undone: it may be planned again.
ENDED_EARLY = frozenset({ExecutionState.CANCELLED.value, ExecutionState.FAILED.value})


class SpuStep(TypedDict):
    """An SPU a plan moves replicas to that cannot take them yet."""
    spu: int
    rack: str | None
    registered: bool
    online: bool
    added: bool  # the plan's scenario adds it, so the walk-through may register it


def _plan(plan_id: int) -> Plan:
    plan = Plan.objects.filter(pk=plan_id).first()
    if plan is None:
        raise NotFound(f"plan {plan_id} not found", field="plan_id")
    return plan


def plan_spus_needed(plan: Plan) -> list[SpuStep]:
    """The target SPUs not registered or not online, by id (empty: ready to apply)."""
    named = sorted({s for m in plan.moves for s in m["after"]})
    known = dict(Spu.objects.filter(id__in=named).values_list("id", "resolution"))
    racks = {s["id"]: s.get("rack") for s in plan.scenario.get("add_spus", [])}
    return [SpuStep(spu=s, rack=racks.get(s), registered=s in known,
                    online=known.get(s) == SpuResolution.ONLINE.value, added=s in racks)
            for s in named if known.get(s) != SpuResolution.ONLINE.value]


@transaction.atomic
def plan_register_spus(*, plan_id: int, by: Actor = None) -> list[int]:
    """Register the SPUs the plan adds that are not registered yet, in their racks."""
    steps = [s for s in plan_spus_needed(_plan(plan_id)) if not s["registered"]]
    strangers = [s["spu"] for s in steps if not s["added"]]
    if strangers:
        raise Conflict(f"plan {plan_id} names SPU {', '.join(map(str, strangers))}, which it "
                       "does not add: it was made for another cluster", field="plan_id")
    for step in steps:
        spu_register(spu_id=step["spu"], rack=step["rack"] or "", by=by)
    return [s["spu"] for s in steps]


def plan_online_spus(*, plan_id: int, by: Actor = None) -> list[int]:
    """Bring the plan's registered SPUs online (their loops start, they connect)."""
    ids = [s["spu"] for s in plan_spus_needed(_plan(plan_id)) if s["registered"]]
    if not ids:
        raise Conflict(f"plan {plan_id} has no registered SPU waiting to come online: "
                       "register them first", field="plan_id")
    for spu_id in ids:
        settle_outage(spu_online(spu_id=spu_id, by=by), wait=False)
    return ids


def plan_rollback(plan: Plan) -> dict[str, Any]:
    """Today's assignment of every partition the plan moves (Kafka reassignment JSON)."""
    topics = sorted({m["topic"] for m in plan.moves})
    current = dict(Topic.objects.filter(name__in=topics,
                                        resolution=TopicResolution.PROVISIONED.value)
                   .values_list("name", "replica_map"))
    return rollback_reassignment(plan_moves(plan.moves), current)


def plan_rest(*, plan_id: int, by: Actor = None) -> Plan:
    """The same what-if planned again from the cluster as it now is (a drain: drained again)."""
    plan = _plan(plan_id)
    state = PlanExecution.objects.filter(plan=plan).values_list("state", flat=True).first()
    if state not in ENDED_EARLY:
        raise Conflict(f"plan {plan_id} is {state or 'not applied'}: only a cancelled or "
                       "failed plan has a rest to plan", field="plan_id")
    scenario = core.scenario_from_dict(plan.scenario)
    if plan.source == Plan.Source.DRAIN:
        drained = scenario.remove_spus[0]
        if not Spu.objects.filter(pk=drained).exists():
            raise Conflict(f"plan {plan_id} drained SPU {drained}, which is no longer "
                           "registered (it held no replica when it was unregistered): "
                           "nothing of this drain is left to plan", field="plan_id")
        return plan_drain(spu_id=drained, by=by)
    # SPUs the plan added may be registered by now, and those it removed gone.
    known = set(Spu.objects.values_list("id", flat=True))
    rest = core.Scenario(f"{plan.name} (rest of plan {plan_id})"[:200],
                         tuple(s for s in scenario.add_spus if s.id not in known),
                         tuple(s for s in scenario.remove_spus if s in known),
                         scenario.lose_racks, scenario.replication)
    return plan_request(scenario=rest, options=core.options_from_dict(plan.options),
                        engine=plan.engine, by=by)
