"""The audit trail: who or which controller changed what, with parameters and result."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from cluster.selectors.filters import event_facets, events_filtered
from cluster.views._shell import paginate, query_without_page
from cluster.views.live import rendered_seqs

PER_PAGE = 50
FILTERS = ("actor", "object_type", "object_name", "operation", "q")


def event_list(request: HttpRequest) -> HttpResponse:
    seqs = rendered_seqs()  # before the data: a change after it is resynced on connect
    filters = {name: request.GET.get(name, "").strip() for name in FILTERS}
    query = events_filtered(actor=filters["actor"], object_type=filters["object_type"],
                            object_name=filters["object_name"],
                            operation=filters["operation"], text=filters["q"])
    return render(request, "cluster/events.html", {
        "page": paginate(request, query, PER_PAGE), "filters": filters,
        "facets": event_facets(), "filtered": any(filters.values()),
        "query": query_without_page(request), "live_seqs": seqs})
