"""The events marked on the scrubber: outages, recoveries, elections, unclean elections,
plan starts and ends, drains; one marker per kind for the events within a second of its
first (an outage's hundreds of partition events are one mark)."""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.db.models import Q

from cluster.models import Event
from cluster.selectors.moments import event_moments
from history.selectors import iso

MAX_EVENTS = 20_000
PLAN_ENDS = ("done", "cancelled", "failed")


def kind_of(object_type: str, operation: str, params: dict[str, Any]) -> str | None:
    """Which mark an event makes on the scrubber (None: none)."""
    if object_type in ("spu", "rack"):
        if operation in ("kill", "offline", "heartbeat-lost") or (
                operation == "resolution" and params.get("to") == "Offline"):
            return "outage"
        if operation in ("start", "online") or (
                operation == "resolution" and params.get("to") == "Online"):
            return "recovery"
    if operation in ("unclean-election", "elect-unclean"):
        return "unclean"
    if object_type == "partition" and operation == "status" and "leader" in params:
        return "election"
    if object_type == "plan":
        if operation == "create" and "drain" in params:
            return "drain"
        if operation == "apply":
            return "plan-start"
        if operation in PLAN_ENDS:
            return "plan-end"
    return None


_WANTED = (Q(object_type__in=("spu", "rack", "plan"))
           | Q(operation__in=("unclean-election", "elect-unclean"))
           | Q(object_type="partition", operation="status"))


def markers(since_ms: int | None, until_ms: int | None = None) -> list[dict[str, Any]]:
    """Marks from ``since_ms`` on (epoch ms), oldest first."""
    query = Event.objects.filter(_WANTED)
    if since_ms:
        query = query.filter(at__gte=datetime.fromtimestamp(since_ms / 1000, UTC))
    if until_ms:
        query = query.filter(at__lte=datetime.fromtimestamp(until_ms / 1000 + 1, UTC))
    rows = [row for row in reversed(list(query.order_by("-at").values_list(
                "pk", "at", "log_offset", "object_type", "object_name", "operation",
                "params")[:MAX_EVENTS]))
            if kind_of(row[3], row[5], row[6] or {}) is not None]
    # Link by log offset everywhere: an event written directly has its moment looked up.
    moments = event_moments(Event(pk=pk, at=at, object_type=object_type, object_name=name,
                                  operation=operation, params=params)
                            for pk, at, offset, object_type, name, operation, params in rows
                            if offset is None)
    marks: list[dict[str, Any]] = []
    latest: dict[str, dict[str, Any]] = {}  # each kind's newest mark
    for pk, at, offset, object_type, name, operation, params in rows:
        kind = kind_of(object_type, operation, params or {}) or ""  # rows kept have one
        offset = offset if offset is not None else moments.get(pk)
        ms = int(at.timestamp() * 1000)
        mark = latest.get(kind)
        # Within a second of the mark's first event, not the same calendar second: a rack
        # outage's events 4 ms apart across a second boundary made two marks, and the first
        # one's compare stopped at the second, before any election.
        if mark is None or ms - mark["at"] >= 1000:
            mark = latest[kind] = {"kind": kind, "at": ms, "offsets": [], "count": 0,
                                   "label": f"{kind}: {object_type} {name} {operation}"}
            marks.append(mark)
        mark["count"] += 1
        if offset is not None:
            mark["offsets"].append(offset)
    return _settled([_ends(m) for m in marks])


def _ends(mark: dict[str, Any]) -> dict[str, Any]:
    """The moments just before and just after the mark's events, for a one-click compare."""
    offsets = mark.pop("offsets")
    if offsets:
        mark["before"], mark["after"] = str(min(offsets) - 1), str(max(offsets))
    else:
        mark["before"] = iso(mark["at"] - 1)
        mark["after"] = iso((mark["at"] // 1000 + 1) * 1000)
    mark["moment"] = mark["after"]
    return mark


# Elections follow an outage, a recovery or a plan in the ticks after it: its "after"
# is the cluster once they ran, just before the next cause (or now), not the same second.
_CONSEQUENCES = ("election", "unclean")


def _settled(marks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for i, mark in enumerate(marks):
        if mark["kind"] in _CONSEQUENCES:
            continue
        following = (m for m in marks[i + 1:] if m["kind"] not in _CONSEQUENCES)
        cause = next(following, None)
        mark["after"] = cause["before"] if cause else "now"
    return marks
