"""Outage controls: take SPUs or racks offline and back, or kill an SPU's loop.

Each view calls the same service as the API (cluster/services/outages.py),
waits for the elections it caused (run here when no worker runs), and says
on the page it came from what the elections did.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from cluster.errors import DomainError
from cluster.models import Partition, Spu
from cluster.services import outages
from cluster.services.outages import OutageResult
from cluster.views._shell import operator_required

# A page request waits this long for the elections; the live pages show the rest.
SETTLE_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Elections:
    """What happened to the partitions an outage touched (read from the store)."""
    touched: int
    elected: int
    offline: int

    @property
    def pending(self) -> int:
        return self.touched - self.elected - self.offline


def _led_by(ids: list[int]) -> list[int]:
    return list(Partition.objects.filter(leader__in=ids).values_list("pk", flat=True))


def _leaderless_on(ids: list[int]) -> list[int]:
    # replicas is a JSON list: filter in Python, the leaderless rows are few.
    rows = Partition.objects.filter(leader__isnull=True).values_list("pk", "replicas")
    return [pk for pk, replicas in rows if set(replicas) & set(ids)]


def _elections_after(pks: list[int], ids: list[int]) -> Elections:
    rows = list(Partition.objects.filter(pk__in=pks).values_list("leader", "resolution"))
    elected = sum(leader is not None and leader not in ids for leader, _ in rows)
    offline = sum(leader is None and res == Partition.Resolution.OFFLINE for leader, res in rows)
    return Elections(len(rows), elected, offline)


def _regained_after(pks: list[int]) -> Elections:
    rows = list(Partition.objects.filter(pk__in=pks).values_list("leader", flat=True))
    elected = sum(leader is not None for leader in rows)
    return Elections(len(rows), elected, len(rows) - elected)


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


def _back(request: HttpRequest) -> HttpResponse:
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        target = reverse("cluster:spus")
    return redirect(target)


def _report(request: HttpRequest, headline: str, result: OutageResult, what: str) -> None:
    if result.settled is False:
        messages.warning(request, f"{headline}: {what}. Elections are still running; the "
                                  "overview and topic pages update as they finish.")
    else:
        messages.success(request, f"{headline}: {what}.")


def _outage(request: HttpRequest, label: str, ids: list[int],
            service: Callable[[], OutageResult], going_down: bool,
            killed: bool = False) -> HttpResponse:
    """Snapshot, call the service, settle, report; a refusal changes nothing."""
    pks = _led_by(ids) if going_down else _leaderless_on(ids)
    try:
        result = outages.settle_outage(service(), killed=killed, timeout_s=SETTLE_TIMEOUT_S)
    except DomainError as exc:
        messages.error(request, exc.message)
        return _back(request)
    headline = f"{label} {result.resolution.lower()}"
    if killed:
        headline = f"{label}: loop killed, " + (
            "the connection manager saw its heartbeat stop and marked it Offline"
            if result.resolution == "Offline" else
            "the connection manager has not missed its heartbeat yet")
    if going_down:
        _report(request, headline, result, _going_down_text(_elections_after(pks, ids)))
    else:
        _report(request, headline, result, _coming_up_text(_regained_after(pks)))
    return _back(request)


def _rack_ids(rack: str) -> list[int]:
    # Unknown racks get no ids here; the service refuses them with its own message.
    return list(Spu.objects.filter(rack=rack).values_list("id", flat=True))


@require_POST
@operator_required
def spu_offline_view(request: HttpRequest, spu_id: int) -> HttpResponse:
    return _outage(request, f"SPU {spu_id}", [spu_id],
                   lambda: outages.spu_offline(spu_id=spu_id, by=request.user), going_down=True)


@require_POST
@operator_required
def spu_online_view(request: HttpRequest, spu_id: int) -> HttpResponse:
    return _outage(request, f"SPU {spu_id}", [spu_id],
                   lambda: outages.spu_online(spu_id=spu_id, by=request.user), going_down=False)


@require_POST
@operator_required
def spu_kill_view(request: HttpRequest, spu_id: int) -> HttpResponse:
    """The loop stops silently; the page waits for the connection manager to notice."""
    return _outage(request, f"SPU {spu_id}", [spu_id],
                   lambda: outages.spu_kill(spu_id=spu_id, by=request.user), going_down=True,
                   killed=True)


@require_POST
@operator_required
def rack_offline_view(request: HttpRequest, rack: str) -> HttpResponse:
    return _outage(request, f"Rack {rack}", _rack_ids(rack),
                   lambda: outages.rack_offline(rack=rack, by=request.user), going_down=True)


@require_POST
@operator_required
def rack_online_view(request: HttpRequest, rack: str) -> HttpResponse:
    return _outage(request, f"Rack {rack}", _rack_ids(rack),
                   lambda: outages.rack_online(rack=rack, by=request.user), going_down=False)
