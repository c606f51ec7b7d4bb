"""Live progress of the workbench's jobs: one group per plan or grid.

Groups are ``plan-<id>`` and ``grid-<id>``; ``planner.consumers.JobConsumer``
forwards ``job.progress`` messages to the job's page.
"""
from __future__ import annotations

from typing import Literal, TypedDict

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings

Kind = Literal["plan", "grid"]


class JobProgress(TypedDict):
    type: Literal["job.progress"]
    kind: Kind
    id: int
    state: str
    stage: str
    fraction: float
    eta_s: float | None
    reason: str


def job_group(kind: Kind, pk: int) -> str:
    return f"{kind}-{pk}"


def publish_progress(kind: Kind, pk: int, state: str, progress: dict[str, object],
                     reason: str = "") -> None:
    """Tell the job's page; a missing channel layer is not the job's failure."""
    layer = get_channel_layer() if settings.LIVE_UPDATES else None
    if layer is None:
        return
    eta = progress.get("eta_s")
    payload = JobProgress(type="job.progress", kind=kind, id=pk, state=state,
                          stage=str(progress.get("stage", "")),
                          fraction=float(progress.get("fraction", 0.0) or 0.0),
                          eta_s=float(eta) if isinstance(eta, (int, float)) else None,
                          reason=reason)
    try:
        async_to_sync(layer.group_send)(job_group(kind, pk), dict(payload))
    except Exception:  # noqa: BLE001 - a dead Redis must not fail the plan
        pass
