"""History's reads: a moment rebuilt from its nearest snapshot, its rows, two moments compared.

Used by `history at` / `history diff`, /api/history/ and the /history/ pages alike.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from datetime import UTC, datetime
from typing import Any, NamedTuple

from django.conf import settings

from cluster import ports
from history.core import replay as core
from history.core import diff as diffs
from history.core.replay import Moment
from cluster.errors import InvalidInput
from cluster.models import Spu
from cluster.selectors.shapes import PartitionRow, row_from_summary
from history.models import Snapshot
from cluster.perf import gc_paused

_CACHE_SIZE = 8
# Entries read per round trip while replaying: a moment rarely needs many past its own.
_READ_BATCH = 1000
_decoded: OrderedDict[int, Moment] = OrderedDict()


class Point(NamedTuple):
    """A moment asked for: by log offset, or by time (epoch ms)."""
    offset: int | None = None
    at_ms: int | None = None


def parse_point(text: object, name: str = "at") -> Point:
    """An offset (a whole number), an ISO 8601 time (UTC unless it says otherwise) or now."""
    raw = str(text).strip()
    if raw == "now":
        return Point(at_ms=2 ** 62)  # every entry written so far
    if raw.isdigit():
        if len(raw) > 18:  # beyond a signed 64-bit integer, as no offset is
            raise InvalidInput(f"{name} is too large: a log offset has at most 18 digits",
                               field=name)
        return Point(offset=int(raw))
    # A "+" left unencoded in a query string arrives as a space.
    raw = raw.replace(" ", "+") if "T" in raw else raw
    try:
        when = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(f"{name} must be a log offset (a whole number) or an ISO 8601 time "
                           f"such as 2026-11-25T04:40:00Z, not {raw[:40]!r}", field=name) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return Point(at_ms=int(when.timestamp() * 1000))


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")


def stamp(m: Moment) -> dict[str, Any]:
    return {"offset": m.offset, "at": m.at, "time": iso(m.at) if m.at else None}


def history_bounds() -> dict[str, Any]:
    """Where history begins (its oldest snapshot, or offset 0) and the log's head."""
    oldest = Snapshot.objects.order_by("offset").values_list("offset", "at").first()
    with ports.bound_to_store():
        head, start = ports.log_head(), ports.log_start()
    if oldest is None:
        begins = (0, _first_at()) if start <= 1 else (None, None)
    else:
        begins = oldest
    # The scrubber runs to now: entries' times are not quite monotone (a unit's entries
    # carry its start, what services note the append time), and reading them costs.
    head_at = int(time.time() * 1000)
    return {"begins": {"offset": begins[0], "at": begins[1],
                       "time": iso(begins[1]) if begins[1] else None},
            "capped": _capped(oldest, head, head_at),
            "max_entries": settings.HISTORY_LOG_MAX_ENTRIES,
            "head": {"offset": head, "at": head_at, "time": iso(head_at) if head_at else None},
            "log_start": start, "snapshots": Snapshot.objects.count()}


def _capped(oldest: tuple[int, int] | None, head: int, now_ms: int) -> bool:
    """Whether history begins later than the retention because of the log's cap: the
    oldest snapshot is younger than the retention and about the cap behind the head
    (the prune keeps it within one snapshot spacing of the cap line)."""
    if oldest is None:
        return False
    young = oldest[1] > now_ms - settings.HISTORY_RETENTION_S * 1000
    spacing = settings.HISTORY_SNAPSHOT_ENTRIES
    near_cap = head - oldest[0] >= settings.HISTORY_LOG_MAX_ENTRIES - spacing
    return young and near_cap


def _first_at() -> int:
    first = ports.read_log(0, 1)
    return first[0].data.get("at", 0) if first else 0


def moment_at(point: Point, after: Moment | None = None) -> tuple[Moment, int]:
    """The moment asked for and the offset its replay started from: the nearest snapshot,
    or ``after`` (an earlier moment) when no snapshot lies between the two."""
    snap = _nearest_snapshot(point)
    if after is not None and (snap is None or snap.offset <= after.offset) \
            and not _past(point, after.offset, after.at):
        base: Moment | None = after.copy()
    else:
        base = _decode(snap) if snap is not None else None
    with ports.bound_to_store():
        if base is None:
            if ports.log_start() > 1:
                raise InvalidInput("history begins at its first snapshot and none is taken "
                                   "yet: run `history snapshot`", field="at")
            _refuse_before_the_log(point)
            base = Moment()
        started = base.offset
        with gc_paused():
            _replay_to(base, point)
    return base, started


def _replay_to(base: Moment, point: Point) -> None:
    first = base.offset + 1
    while True:
        batch = _READ_BATCH if point.offset is None else min(_READ_BATCH,
                                                             point.offset - first + 1)
        if batch <= 0:
            return
        entries = ports.read_log(first, batch)
        for entry in entries:
            if _past(point, entry.offset, int(entry.data.get("at") or 0)):
                return
            core.apply(base, entry.offset, entry.data)
        if len(entries) < batch:
            return
        first = entries[-1].offset + 1


def _refuse_before_the_log(point: Point) -> None:
    """A time before the log's first entry shows nothing kept: say where history begins."""
    first_at = _first_at()
    if point.at_ms is not None and first_at and point.at_ms < first_at:
        raise InvalidInput(f"history begins at offset 1 ({iso(first_at)}); nothing is "
                           f"recorded before it", field="at")


def _past(point: Point, offset: int, at: int) -> bool:
    if point.offset is not None:
        return offset > point.offset
    return at > (point.at_ms or 0)


def _nearest_snapshot(point: Point) -> Snapshot | None:
    query = Snapshot.objects.order_by("-offset").defer("data")
    near = (query.filter(offset__lte=point.offset) if point.offset is not None
            else query.filter(at__lte=point.at_ms))
    found = near.first()
    with ports.bound_to_store():
        whole_log = ports.log_start() <= 1
    if found is None and not whole_log and Snapshot.objects.exists():
        oldest = Snapshot.objects.order_by("offset").values_list("offset", "at").first()
        raise InvalidInput(f"history begins at offset {oldest[0]} ({iso(oldest[1])}); "
                           f"older moments are no longer kept", field="at")
    return found


def _decode(snap: Snapshot) -> Moment:
    """A decoded snapshot, a copy of one of the few kept in memory."""
    cached = _decoded.get(snap.pk)
    if cached is None:
        blob = Snapshot.objects.values_list("data", flat=True).get(pk=snap.pk)
        with gc_paused():
            cached = core.decode(bytes(blob))
        _decoded[snap.pk] = cached
        while len(_decoded) > _CACHE_SIZE:
            _decoded.popitem(last=False)
    return cached.copy()


def history_rows(m: Moment, topic: str | None = None, first: int = 0,
                 limit: int | None = None) -> list[PartitionRow]:
    """`partition list --json` rows as they were at the moment."""
    keys = core.keys_of(m, topic)
    keys = keys[first:] if limit is None else keys[first:first + limit]
    return [row_from_summary(*core.partition_at(m, k)) for k in keys]


def _racks_now() -> dict[int, str]:
    return {spu: rack for spu, rack in Spu.objects.values_list("id", "rack")}


def spu_racks(m: Moment) -> dict[int, str]:
    """Each SPU's rack at the moment (the log's ``spu-registered`` / ``spu-rack``); an SPU
    registered before racks were logged, in the rack it has now."""
    return {**_racks_now(), **m.racks}


def spu_states(m: Moment) -> list[dict[str, Any]]:
    counts = diffs.spu_counts(m)
    racks = spu_racks(m)
    return [{"spu": spu, "rack": racks.get(spu, ""), "state": _state(m, spu),
             "leaders": c.leaders, "replicas": c.replicas}
            for spu, c in counts.items()]


def _state(m: Moment, spu: int) -> str:
    if spu in m.killed:
        return "killed"
    return "online" if m.spus.get(spu) else "offline"


def history_at(point: Point, topic: str | None = None) -> list[PartitionRow]:
    moment, _ = moment_at(point)
    return history_rows(moment, topic)


def history_diff(a: Point, b: Point) -> dict[str, Any]:
    """Which partitions changed leader, LRS or replicas between two moments, with counts."""
    first, _ = moment_at(a)
    second, _ = moment_at(b, after=first)
    return {"from": stamp(first), "to": stamp(second),
            **diffs.diff(first, second, _racks_now())}
