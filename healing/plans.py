"""Self-healing's plans: stored as the planner stores any plan, applied with its throttles.

A self-healing plan is an ordinary plan (its page, status, pause and cancel
are the planner's) whose ``created_by`` is ``self-healing``; the planner's
one-plan-at-a-time constraint keeps it from ever running beside an
operator's plan.
"""
from __future__ import annotations

from collections.abc import Sequence

from planner import core as planner
from planner.execution import plan_apply
from planner.models import Plan, PlanExecution

from healing import core
from healing.journal import Journal

ACTOR = "self-healing"


def active_execution() -> PlanExecution | None:
    return PlanExecution.objects.filter(finished_at__isnull=True).select_related("plan").first()


def outcome_of(plan_id: int | None) -> tuple[str | None, str]:
    """How a plan's execution ended (None while it runs or was never applied), and why."""
    if plan_id is None:
        return None, ""
    row = PlanExecution.objects.filter(plan_id=plan_id).values_list(
        "state", "finished_at", "reason").first()
    if row is None:
        # Never applied: a dry run's plan, or the plan row was deleted under it.
        exists = Plan.objects.filter(pk=plan_id).exists()
        return (None, "") if exists else ("failed", "the plan was deleted")
    state, finished, reason = row
    return (state, reason) if finished is not None else (None, "")


def _move_dict(m: planner.Move) -> dict:
    return {"topic": m.topic, "partition": m.partition, "before": list(m.before),
            "after": list(m.after), "added": list(m.added), "removed": list(m.removed),
            "leader_change": m.leader_change}


def store_fix(fix: core.Fix, anomalies: Sequence[core.Anomaly], journal: Journal) -> Plan:
    moves = [_move_dict(m) for m in fix.moves]
    down = sorted({s for a in anomalies for s in a.spus
                   if a.type is core.AnomalyType.SPU_DOWN})
    scenario = {"name": fix.name, "add_spus": [], "remove_spus": down, "lose_racks": [],
                "replication": {}}
    metrics = {"replicas_moved": sum(len(m.added) for m in fix.moves),
               "partitions_moved": len(fix.moves),
               "leader_changes": sum(m.leader_change for m in fix.moves),
               "left_for_later": fix.cut, "rack_rule_broken": fix.racks_broken}
    plan = Plan.objects.create(
        created_by=ACTOR, name=fix.name[:200], engine=Plan.Engine.LOCAL,
        source=Plan.Source.STORE, scenario=scenario,
        options=planner.options_to_dict(planner.Options()), metrics=metrics, moves=moves,
        target=core.target_of(fix.current, fix.moves), current=fix.current)
    journal.event(ACTOR, "plan", plan.pk, "create",
                  {"anomalies": [a.key for a in anomalies], "moves": len(moves),
                   "left_for_later": fix.cut, "rack_rule_broken": fix.racks_broken},
                  result=f"{metrics['replicas_moved']} replicas moved")
    return plan


def apply_fix(plan: Plan, settings: core.Settings) -> PlanExecution:
    """Apply with self-healing's throttles: the move counts and the byte rate."""
    return plan_apply(plan_id=plan.pk, max_moves_per_spu=settings.max_moves_per_spu,
                      max_moves=settings.max_moves,
                      throttle_bytes_per_s=settings.throttle_bytes_per_s, by=ACTOR)
