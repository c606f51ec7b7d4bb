"""/history/: the scrubber over the metadata log; /history/diff/: two moments compared."""
from __future__ import annotations

from urllib.parse import quote

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from cluster import charts
from cluster.errors import InvalidInput
from cluster.models import Event
from cluster.selectors.moments import event_moments
from history.charts import moment_charts
from history.markers import markers
from history.present import moment_view
from history.selectors import history_bounds, history_diff, moment_at, parse_point, spu_racks

SPEEDS = (1, 2, 5, 10, 30, 60)


def _page_number(request: HttpRequest) -> int:
    raw = request.GET.get("page", "1")
    return int(raw) if raw.isdigit() and len(raw) < 10 else 1


def history_page(request: HttpRequest) -> HttpResponse:
    event = request.GET.get("event", "")
    if event.isdigit() and len(event) < 19:
        return redirect(f"{reverse('history:history')}?at={quote(_event_moment(int(event)))}")
    error, data = "", None
    at = request.GET.get("at", "").strip()
    topic = request.GET.get("topic", "").strip() or None
    try:
        point = parse_point(at) if at else None
        data = moment_view(point, topic=topic, page=_page_number(request), with_charts=True)
    except InvalidInput as exc:
        error = exc.message
    bounds = history_bounds() if data is None else data
    # The moment's answer carries begins/head; whether the cap moved begins is the page's.
    capped = bounds["capped"] if data is None else history_bounds()["capped"]
    return render(request, "history/history.html", {
        "data": data, "error": error, "at": at, "topic": topic or "",
        "bounds": bounds, "markers": markers(bounds["begins"]["at"]),
        "capped": capped, "max_entries": settings.HISTORY_LOG_MAX_ENTRIES,
        "speeds": SPEEDS, "plotly_config": charts.PLOTLY_CONFIG,
        "total_rows": [(n.replace("spus_", "SPUs ").replace("_", " "), n, v)
                       for n, v in (data or {}).get("totals", {}).items()],
        "retention_days": round(settings.HISTORY_RETENTION_S / 86400, 1),
        "chart_list": [(i, f"fig-{i}", f) for i, f in (data or {}).get("charts", {}).items()]},
        status=400 if error else 200)


def _event_moment(pk: int) -> str:
    """An event's moment: its log offset, or its time when the log no longer holds it."""
    event = Event.objects.filter(pk=pk).first()
    if event is None:
        return "now"
    offset = event_moments([event]).get(pk)
    return str(offset) if offset is not None else event.at.isoformat()


def history_diff_page(request: HttpRequest) -> HttpResponse:
    start, end = request.GET.get("from", "").strip(), request.GET.get("to", "").strip()
    error, report, figures = "", None, None
    if start and end:
        try:
            a, b = parse_point(start, "from"), parse_point(end, "to")
            report = history_diff(a, b)
            first, second = moment_at(a)[0], moment_at(b)[0]
            figures = {"before": moment_charts(first, spu_racks(first)),
                       "after": moment_charts(second, spu_racks(second))}
        except InvalidInput as exc:
            error = exc.message
    elif start or end:
        error = "Give both moments: from and to (an offset or an ISO time)."
    figures = figures or {"before": {}, "after": {}}
    return render(request, "history/diff.html", {
        "report": report, "error": error, "start": start, "end": end,
        "pairs": [(i, f"fig-before-{i}", figures["before"][i], f"fig-after-{i}",
                   figures["after"][i]) for i in figures["before"]],
        "plotly_config": charts.PLOTLY_CONFIG}, status=400 if error else 200)
