"""/metrics, /healthz and /readyz: outside the login, for scrapers and orchestrators."""
from __future__ import annotations

from collections.abc import Iterator

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET, require_safe
from prometheus_client import REGISTRY, CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.core import Metric

from cluster import ports
from cluster.metrics.access import scrape_refusal
from cluster.metrics.collector import ControlRoomCollector, figure_families
from cluster.metrics.exposition import render
from cluster.metrics.readiness import readiness


class _Scrape:
    """The process's own metrics (default registry) followed by the engine's."""

    def __init__(self, cluster: ControlRoomCollector) -> None:
        self.cluster = cluster

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()
        yield from self.cluster.collect()


def _collector() -> ControlRoomCollector:
    """The cluster's collector with the sources the engine was built with (the planner's
    moves in flight, self-healing's series): a view is a shell Django constructs, so it
    reads the process's engine rather than being handed one."""
    engine = ports.engine()
    return ControlRoomCollector(moves_in_flight=engine.moves_in_flight,
                                families=engine.metric_families)


@login_not_required
@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    refusal = scrape_refusal(request)
    if refusal is not None:
        response = JsonResponse({"error": refusal.error, "details": refusal.details},
                                status=refusal.status)
        if refusal.status == 401:
            response["WWW-Authenticate"] = "Bearer"
        return response
    # The store's figures first: a scrape that cannot read the store fails as a whole.
    figures = render(figure_families()).encode()
    scrape = generate_latest(_Scrape(_collector()))
    return HttpResponse(scrape + figures, content_type=CONTENT_TYPE_LATEST)


@login_not_required
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


@login_not_required
@require_safe
def readyz(request: HttpRequest) -> JsonResponse:
    state = readiness()
    return JsonResponse(state, status=200 if state["ready"] else 503)
