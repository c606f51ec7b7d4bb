"""Network cut controls on the SPU and overview pages (the link matrix partial's forms),
and the latest rehearsal's full report as a page.

Both call the services the API and ``net`` command use (cluster/services/network.py)
and step the engine once (no worker: here); a refusal is said on the page and
changes nothing.
"""
from __future__ import annotations

import logging
from datetime import datetime, timezone as dt_timezone
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from cluster.errors import DomainError
from cluster.services.network import CutRequest, net_cut, net_heal, net_report, net_step
from cluster.templatetags.numbers import duration
from cluster.views._shell import back, operator_required
from cluster.views.outages import _post_or_back

log = logging.getLogger(__name__)


def _int_or_none(text: str) -> int | None:
    return int(text) if text.strip().isdigit() else None


@_post_or_back
@operator_required
def net_cut_view(request: HttpRequest) -> HttpResponse:
    post = request.POST
    source, _, peer = post.get("source", "controller").partition(":")
    req = CutRequest(_int_or_none(post.get("spu", "")), source, _int_or_none(peer),
                     post.get("racks") or None, post.get("one_way") == "on",
                     post.get("inbound") == "on")
    try:
        cut = net_cut(request=req, by=request.user)
    except DomainError as exc:
        messages.error(request, f"Nothing was cut: {exc.message}")
        return back(request)
    net_step()
    messages.success(request, f"Cut {cut['id']} in force: {cut['label']}. An SPU cut from "
                              "the controller is declared offline once its session times out.")
    return back(request)


@_post_or_back
@operator_required
def net_heal_view(request: HttpRequest) -> HttpResponse:
    try:
        out = net_heal(heal_all=True, by=request.user)
    except DomainError as exc:
        messages.error(request, exc.message)
        return back(request)
    net_step()
    messages.success(request, f"Healed {len(out['healed'])} cut(s); SPUs rejoined: "
                              f"{out['rejoined'] or 'none'}. The network report says what "
                              "the cut cost.")
    return back(request)


# The report counts the simulated producers' acks=1 writes on a row of their own: nobody
# waits for their answer, so they are neither kept nor truncated acknowledged writes, but
# /metrics counts them (tests/integration/test_net_report_page.py pins the sum).
SIMULATED_NOTE = (
    "Answered acks=1 writes are those of producers that wait for their answer (pages, the "
    "API, the produce command). The simulated producers (topic producer rates) also write "
    "with acks=1, but nobody waits for their answer: they are counted on their own row, "
    "and one of them that a cut truncates is counted under unacknowledged writes lost. "
    "The two rows together are what /metrics counted in records_produced{acks=\"1\"} "
    "during the rehearsal.")


def _moment(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=dt_timezone.utc)


def _ms_text(ms: int) -> str:
    """1234 -> "1.2 s"; a minute and over as minutes and seconds."""
    return f"{ms / 1000:.1f} s" if ms < 60_000 else duration(ms / 1000)


def net_report_page(request: HttpRequest) -> HttpResponse:
    """``/net/report/``: the latest rehearsal in full (the page of ``GET /api/net/report/``)."""
    try:
        report = net_report()
    except Exception:  # noqa: BLE001  the page says so instead of failing
        log.warning("network report not readable", exc_info=True)
        return render(request, "cluster/net_report.html", {"unavailable": True}, status=503)
    context: dict[str, Any] = {"report": report, "simulated_note": SIMULATED_NOTE}
    if report:
        # A report settled before the simulated writes were counted has none.
        simulated = report.get("simulated", {}).get("1", 0)
        context.update(
            simulated_acks_1=simulated,
            acks_1_written=report["acknowledged"].get("1", 0) + simulated,
            started=_moment(report.get("started_ms")), healed=_moment(report.get("healed_ms")),
            leaderless=[(name, _ms_text(ms)) for name, ms in sorted(
                report.get("leaderless_ms", {}).items(), key=lambda item: (-item[1], item[0]))],
            refused=sorted(report.get("refused", {}).items(), key=lambda item: (-item[1], item[0])))
    return render(request, "cluster/net_report.html", context)
