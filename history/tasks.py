"""The beat's history work: a snapshot when one is due (history/services.py)."""
from __future__ import annotations

from celery import shared_task

from history.services import snapshot_if_due


@shared_task(ignore_result=True)
def history_snapshot() -> None:
    snapshot_if_due()
