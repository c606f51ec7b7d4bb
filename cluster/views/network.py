"""Network cut controls on the SPU and overview pages (the link matrix partial's forms).

Both call the services the API and ``net`` command use (cluster/services/network.py)
and step the engine once (no worker: here); a refusal is said on the page and
changes nothing.
"""
from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse

from cluster.errors import DomainError
from cluster.services.network import CutRequest, net_cut, net_heal, net_step
from cluster.views._shell import back, operator_required
from cluster.views.outages import _post_or_back


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
