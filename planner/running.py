"""What is being carried out: the executions under way and their plans' moves.

Read by the executor inside each tick and by the planner's inputs (a partition under a
move is planned from the move's target); kept apart from the executor, which imports the
engine, so that planning does not import it back (an import circle before).
"""
from __future__ import annotations

from planner.core.execution import ExecutionState, PlanMove, plan_moves
from planner.models import Plan, PlanExecution

S = ExecutionState


def executing() -> list[PlanExecution]:
    return list(PlanExecution.objects.filter(
        state__in=[S.RUNNING.value, S.PAUSED.value, S.CANCELLED.value],
        finished_at__isnull=True))


# A stored plan never changes, so its parsed moves are kept for the ticks that follow:
# reading the plan row each tick decoded its whole "current" layout (10,000 partitions).
# Keyed with the creation time too: a database made anew reuses plan ids.
_moves_cache: dict[tuple[int, object], list[PlanMove]] = {}


def moves_of(plan_id: int) -> list[PlanMove]:
    key = (plan_id, Plan.objects.filter(pk=plan_id).values_list("created_at", flat=True).get())
    if key not in _moves_cache:
        _moves_cache.clear()
        rows = Plan.objects.filter(pk=plan_id).values_list("moves", flat=True).get()
        _moves_cache[key] = plan_moves(rows)
    return _moves_cache[key]
