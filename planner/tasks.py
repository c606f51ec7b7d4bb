"""Celery tasks of the workbench: thin shells over planner.services."""
from __future__ import annotations

from celery import shared_task

from planner import services


@shared_task(name="planner.tasks.compute_plan")
def compute_plan(plan_id: int) -> str:
    return services.plan_compute(plan_id=plan_id).state


@shared_task(name="planner.tasks.compute_grid")
def compute_grid(grid_id: int) -> str:
    return services.grid_compute(grid_id=grid_id).state
