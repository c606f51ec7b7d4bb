"""Progress of a running job: throttled reports, and the operator's cancel heard.

``Reporter`` is called by the planner's mapper once per topic (or by the grid
loop once per scenario); it stores and announces the progress at most a few
times a second, and raises ``Cancelled`` once the job's state says so.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from planner.core.jobs import Cancelled, GridState, Progress, Stage, estimate
from planner.core.planner import Mapper, local_map
from planner.live import Kind, publish_progress

T = TypeVar("T")
U = TypeVar("U")
REPORT_EVERY_S = 0.25

# (kind, pk, progress dict) -> the job's state now; the service that stores it.
Store = Callable[[Kind, int, dict[str, object]], str]


class Reporter:
    def __init__(self, kind: Kind, pk: int, store: Store) -> None:
        self.kind, self.pk, self.store = kind, pk, store
        self.started = time.monotonic()
        self.last_stage: Stage | None = None
        self.last_at = 0.0

    def __call__(self, stage: Stage, done: int = 0, total: int = 1) -> None:
        now = time.monotonic()
        if stage == self.last_stage and now - self.last_at < REPORT_EVERY_S:
            return
        self.last_stage, self.last_at = stage, now
        progress = estimate(stage, done, total, now - self.started)
        self._report(progress)

    def _report(self, progress: Progress) -> None:
        state = self.store(self.kind, self.pk, progress.as_dict())
        if state == GridState.CANCELLED:
            raise Cancelled(f"{self.kind} {self.pk} was cancelled")
        publish_progress(self.kind, self.pk, state, progress.as_dict())

    def mapper(self, inner: Mapper = local_map) -> Mapper:
        """The planner's per-topic map, reporting as topics are placed."""
        def tracked(fn: Callable[[T], U], items: Sequence[T]) -> list[U]:
            items = list(items)
            self(Stage.PLACING, 0, len(items))
            if inner is local_map:
                out = []
                for done, item in enumerate(items):
                    self(Stage.PLACING, done, len(items))
                    out.append(fn(item))
            else:
                out = inner(fn, items)
            self(Stage.FINISHING, 0, 1)
            return out
        return tracked
