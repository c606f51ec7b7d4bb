"""Live progress of the workbench's jobs: one group per plan or grid.

Groups are ``plan-<id>`` and ``grid-<id>``; ``planner.consumers.JobConsumer``
forwards ``job.progress`` messages (a plan or grid being computed) and
``plan.progress`` messages (a plan being carried out) to the job's page.

``plan.progress`` is coalesced: the executor offers the latest progress at
every replication tick that changed it, and one sender thread per process
sends each plan's latest at most once per ``WINDOW_S``, stamped with the
group's sequence (cluster/live.py's stamp) so a page sees a gap. Each message
carries the whole execution record, never a difference: the last one sent is
always the latest offered.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Literal, TypedDict

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django import db
from django.conf import settings

from cluster.live import CLUSTER_GROUP, PlanProgress, Stamp, stamp
from cluster.ports import next_live_seq
from planner.core.spu_progress import SpuProgress

log = logging.getLogger(__name__)
# At most ~10 messages a second per plan, as for the cluster's live batches.
WINDOW_S = 0.1

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


class ExecutionRecord(TypedDict):
    """An applied plan's record: who applied it, when, how long, what moved (per SPU).

    ``GET /api/plans/<id>/`` answers it as ``execution`` (planner.selectors)."""
    state: str
    applied_by: str
    started_at: str | None
    finished_at: str | None
    duration_s: float | None
    moves_total: int
    moves_done: int
    moves_failed: int
    moves_in_flight: int
    bytes_moved: int
    max_moves_per_spu: int
    max_moves: int
    reason: str
    throttle_bytes_per_s: int | None
    bytes_copied: int
    bytes_per_s: float | None
    eta_s: float | None
    estimated_finish_at: str | None
    per_spu: list[SpuProgress]


class ApplyProgress(ExecutionRecord, Stamp):
    """A plan being carried out moved on: its whole record, on the plan's group."""
    type: Literal["plan.progress"]
    plan: int


Build = Callable[[], dict[str, Any]]  # an ApplyProgress without its stamp
Send = Callable[[str, dict[str, Any]], None]


class Coalescer:
    """Keeps the latest payload per group; one thread sends each group's at most once a window.

    Payloads are built by the thread (``offer`` takes a builder), so the replication
    tick that offers them pays neither the build nor the send.
    """

    def __init__(self, send: Send, window_s: float = WINDOW_S) -> None:
        self.send, self.window_s = send, window_s
        self.pending: dict[str, Build] = {}
        self.last: dict[str, float] = {}
        self.cond = threading.Condition()
        self.thread: threading.Thread | None = None

    def offer(self, group: str, build: Build) -> None:
        with self.cond:
            self.pending[group] = build
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="plan-progress",
                                               daemon=True)
                self.thread.start()
            self.cond.notify()

    def idle(self) -> bool:
        with self.cond:
            return not self.pending

    def _due(self) -> list[tuple[str, Build]]:
        """Under the lock: wait until some group's window is over, then take its latest."""
        while True:
            now = time.monotonic()
            opens = {g: self.last.get(g, float("-inf")) + self.window_s for g in self.pending}
            due = [g for g, at in opens.items() if at <= now]
            if due:
                for group in due:
                    self.last[group] = now
                return [(g, self.pending.pop(g)) for g in due]
            self.cond.wait(min(opens.values()) - now if opens else None)

    def _run(self) -> None:
        while True:
            with self.cond:
                batch = self._due()
            for group, build in batch:
                try:
                    self.send(group, build())
                except Exception:  # noqa: BLE001  a page missing an update must not stop the rest
                    log.warning("plan progress to %s not sent", group, exc_info=True)
            # A builder may read the store on this thread, which lives as long as the
            # process: no connection is kept open between batches (issue 36.3).
            db.connections.close_all()


class _LayerSender:
    """Sends from the coalescer's thread on one event loop kept for the process's life:
    async_to_sync would build a loop, and new Redis connections, per message."""

    def __init__(self) -> None:
        self.loop: asyncio.AbstractEventLoop | None = None

    def __call__(self, group: str, payload: dict[str, Any]) -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        if self.loop is None:
            self.loop = asyncio.new_event_loop()
        message = {**payload, **stamp(group, next_live_seq(group))}
        self.loop.run_until_complete(layer.group_send(group, message))


_progress = Coalescer(_LayerSender())


def offer_apply_progress(plan_id: int, record: Callable[[], ExecutionRecord],
                         counts: PlanProgress) -> None:
    """The plan's page hears ``record()`` within a window, unless a later offer replaces it;
    the cluster's pages hear ``counts``, stamped like every message of their group
    (live.js reloads a page on a message without a format version)."""
    if not settings.LIVE_UPDATES:
        return
    _progress.offer(job_group("plan", plan_id),
                    lambda: {"type": "plan.progress", "plan": plan_id, **record()})
    _progress.offer(CLUSTER_GROUP, lambda: dict(counts))


def apply_progress_idle() -> bool:
    """Nothing offered is waiting for its window (tests and benchmarks wait on it)."""
    return _progress.idle()
