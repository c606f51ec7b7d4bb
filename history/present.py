"""One moment as the page and /api/history/ show it: stamps, totals, SPUs, a page of rows."""
from __future__ import annotations

from typing import Any

from django.conf import settings

from history.charts import moment_charts
from history.selectors import (Point, history_bounds, history_rows, moment_at, spu_racks,
                               spu_states, stamp)
from history.core import replay as core

PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000


def moment_view(point: Point | None, *, topic: str | None = None, page: int = 1,
                size: int = PAGE_SIZE, with_charts: bool = False) -> dict[str, Any]:
    """Everything the scrubber shows at ``point`` (None: the log's head, now)."""
    bounds = history_bounds()
    if point is None:
        point = Point(offset=bounds["head"]["offset"])
    moment, started = moment_at(point)
    count = len(core.keys_of(moment, topic))
    pages = max(1, -(-count // size))
    page = min(max(page, 1), pages)
    data: dict[str, Any] = {
        "moment": stamp(moment), "replayed_from": started, "begins": bounds["begins"],
        "head": bounds["head"], "retention_s": settings.HISTORY_RETENTION_S,
        "totals": core.totals(moment), "spus": spu_states(moment),
        "partitions": history_rows(moment, topic, (page - 1) * size, size),
        "count": count, "page": page, "pages": pages}
    if with_charts:
        data["charts"] = moment_charts(moment, spu_racks(moment))
    return data
