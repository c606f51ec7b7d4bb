"""The audit trail: who or which controller changed what, with parameters and result."""
from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from cluster.selectors.filters import event_facets, events_filtered
from cluster.selectors.moments import event_moments
from cluster.views._shell import paginate, query_without_page
from cluster.views.live import rendered_seqs

PER_PAGE = 50
FILTERS = ("actor", "object_type", "object_name", "operation", "q")
# A parameter shows this many list items and characters; the rest is counted, so one
# plan over 300 SPUs keeps its row one or two lines high. The API has every value.
ITEMS_SHOWN = 8
CHARS_SHOWN = 80


def param_text(value: Any) -> str:
    """One event parameter, short: long lists say how many more, long text is cut."""
    if isinstance(value, list) and len(value) > ITEMS_SHOWN:
        head = ", ".join(json.dumps(v) for v in value[:ITEMS_SHOWN])
        return f"[{head}, … {len(value) - ITEMS_SHOWN} more]"
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= CHARS_SHOWN else text[:CHARS_SHOWN - 1] + "…"


def event_list(request: HttpRequest) -> HttpResponse:
    seqs = rendered_seqs()  # before the data: a change after it is resynced on connect
    filters = {name: request.GET.get(name, "").strip() for name in FILTERS}
    query = events_filtered(actor=filters["actor"], object_type=filters["object_type"],
                            object_name=filters["object_name"],
                            operation=filters["operation"], text=filters["q"])
    page = paginate(request, query, PER_PAGE)
    moments = event_moments(page.object_list)
    for event in page.object_list:
        event.moment = moments.get(event.pk)
        # A parameter without a value (a plan not made yet) is left out, not shown as null.
        event.shown_params = [(k, param_text(v)) for k, v in (event.params or {}).items()
                              if v is not None]
    return render(request, "cluster/events.html", {
        "page": page, "filters": filters,
        "facets": event_facets(), "filtered": any(filters.values()),
        "query": query_without_page(request), "live_seqs": seqs})
