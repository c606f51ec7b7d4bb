"""Outage controls: take SPUs or racks offline and back, or kill an SPU's loop.

Each view calls the same service as the API and the CLI
(cluster/services/outages.py), waits for the elections it caused (run here
when no worker runs), and says on the page what the service reports the
elections did.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.utils.html import format_html
from django.utils.safestring import SafeString
from redis.exceptions import RedisError

from cluster.adapters import metadata_log
from cluster.engine.engine import current as engine

from cluster.errors import DomainError, Unavailable
from cluster.core.spus import SpuResolution
from cluster.services import outages
from cluster.services.outages import Elections, OutageResult
from cluster.views._shell import back, operator_required

# A page request waits this long for the elections; the live pages show the rest.
SETTLE_TIMEOUT_S = 10.0


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _going_down_text(e: Elections) -> str:
    if not e.touched:
        return "it led no partition, so no election was needed"
    text = (f"{_plural(e.elected, 'partition')} elected a new leader, "
            f"{e.offline} left Offline")
    return text + (f", {e.pending} still electing" if e.pending else "")


def _coming_up_text(e: Elections) -> str:
    if not e.touched:
        return "no leaderless partition was waiting for it"
    return f"{_plural(e.elected, 'Offline partition')} elected a leader, {e.offline} still Offline"


def _post_or_back(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """POST acts; a GET (a stale tab's button replayed by the login redirect) changes
    nothing and lands on the page the button was on, named by ``?next=`` in its action."""
    @wraps(view)
    def wrapper(request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        if request.method == "POST":
            return view(request, *args, **kwargs)
        if request.method in ("GET", "HEAD"):
            messages.info(request, "Nothing was changed: press the button again to act.")
            return back(request)
        return HttpResponseNotAllowed(["POST"])
    return wrapper


def _log_head() -> int | None:
    """The log's head, or None when the hot state cannot be read: the action then says
    why (a refusal, "nothing changed") without a link, instead of failing on the read."""
    try:
        with engine().bound():
            return metadata_log.head()
    except (RedisError, Unavailable):
        return None


def _with_moment(text: str, before: int | None, after: int | None) -> str | SafeString:
    """The result and, beside it, links to the moment it happened and to before / after
    (the log offsets around the action: the history pages replay them)."""
    if before is None or after is None:
        return text
    return format_html('<span class="message-text">{}</span> <a class="moment-link" '
                       'href="/history/?at={}">view this moment</a> · <a class="diff-link" '
                       'href="/history/diff/?from={}&amp;to={}">before / after</a>',
                       text, after, before, after)


def _report(request: HttpRequest, headline: str, result: OutageResult, what: str,
            offsets: tuple[int | None, int | None]) -> None:
    if result.settled is False:
        messages.warning(request, _with_moment(
            f"{headline}: {what}. Elections are still running; the overview and topic pages "
            "update as they finish.", *offsets))
    else:
        messages.success(request, _with_moment(f"{headline}: {what}.", *offsets))


def _outage(request: HttpRequest, label: str, service: Callable[[], OutageResult],
            killed: bool = False) -> HttpResponse:
    """Call the service, settle, report the elections it caused; a refusal changes nothing."""
    before = _log_head()
    try:
        result = outages.settle_outage(service(), killed=killed, timeout_s=SETTLE_TIMEOUT_S)
    except DomainError as exc:
        messages.error(request, exc.message)
        return back(request)
    if result.unchanged:
        messages.info(request, f"{result.unchanged}.")
        return back(request)
    headline = f"{label} {result.resolution.lower()}"
    if killed:
        headline = f"{label}: loop killed, " + (
            "the connection manager saw its heartbeat stop and marked it Offline"
            if result.resolution == SpuResolution.OFFLINE.value else
            "the connection manager has not missed its heartbeat yet")
    text = _going_down_text if result.going_down else _coming_up_text
    _report(request, headline, result, text(result.elections or Elections(0, 0, 0)),
            (before, _log_head()))
    return back(request)


def _outage_view(service: Callable[..., OutageResult], label: str,
                 killed: bool = False) -> Callable[..., HttpResponse]:
    """A page action for one outage service; ``label`` is formatted with the URL's kwargs."""
    @_post_or_back
    @operator_required
    def view(request: HttpRequest, **kwargs: Any) -> HttpResponse:
        return _outage(request, label.format(**kwargs),
                       lambda: service(**kwargs, by=request.user), killed=killed)
    view.__name__ = f"{service.__name__}_view"
    return view


spu_offline_view = _outage_view(outages.spu_offline, "SPU {spu_id}")
spu_online_view = _outage_view(outages.spu_online, "SPU {spu_id}")
# The loop stops silently; the page waits for the connection manager to notice.
spu_kill_view = _outage_view(outages.spu_kill, "SPU {spu_id}", killed=True)
rack_offline_view = _outage_view(outages.rack_offline, "Rack {rack}")
rack_online_view = _outage_view(outages.rack_online, "Rack {rack}")
