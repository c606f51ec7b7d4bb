"""The beat's task: one run of the anomaly detector (a thin shell over healing.services)."""
from __future__ import annotations

from typing import Any

from celery import shared_task

from healing import services


@shared_task(name="healing.tasks.healing_check")
def healing_check() -> dict[str, Any]:
    return services.healing_check()
