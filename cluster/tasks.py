"""Celery tasks: thin shells that call services."""
from __future__ import annotations

from celery import shared_task

from cluster.services import spg_reconcile_invalid, topics_reconcile_waiting


@shared_task
def reconcile_topics() -> dict[str, list[str]]:
    """Periodic reconciliation (beat): the same services commands use."""
    return {"topics": topics_reconcile_waiting(), "groups": spg_reconcile_invalid()}
