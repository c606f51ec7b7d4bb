"""Leader actions from the pages: elect preferred leaders (cluster-wide or for one topic)."""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_POST

from cluster.errors import DomainError
from cluster.services.leaders import PreferredReport, leader_elect_preferred
from cluster.views._shell import back, operator_required


@require_POST
@operator_required
def leaders_elect_preferred_view(request: HttpRequest) -> HttpResponse:
    topic = request.POST.get("topic") or None
    try:
        report = leader_elect_preferred(topic=topic, by=request.user)
    except DomainError as exc:
        messages.error(request, exc.message)
        return back(request)
    messages.success(request, _report_text(report))
    return back(request)


def _report_text(report: PreferredReport) -> str:
    scope = f"topic {report.topic}" if report.topic else "the cluster"
    text = (f"Preferred leaders elected for {scope}: {len(report.moved)} moved, "
            f"{report.already_preferred} already led by their preferred SPU")
    if report.not_moved:
        reasons = sorted({getattr(n.reason, "value", str(n.reason)) for n in report.not_moved})
        text += f", {len(report.not_moved)} not moved ({'; '.join(reasons[:3])})"
    return text + "."
