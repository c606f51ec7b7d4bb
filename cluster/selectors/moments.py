"""Each event's moment as a metadata-log offset, for the links to history (issue 35 item 4).

An event projected from the log keeps its entry's offset. One a service writes directly
(an operator's offline, a registration) has none, and its time precedes the entries that
carry its change: a link by its time, cut to the second or not, showed the moment before
it. Its moment is the log entry that carried its change (found by the SPUs it names), or,
for an event that changes nothing in the log (a kill), the last entry written by then.
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from redis.exceptions import RedisError

from cluster.adapters import metadata_log
from cluster.engine.engine import current as engine
from cluster.errors import Unavailable
from cluster.models import Event

# Entries read past an event's time for the one that carried its change (one request's).
SCAN = 500
BACK = 50  # and before it: entries carry their unit's start, which may precede the event
_SPU_ENTRIES = {"spu-sync", "spu"}
_CHANGES = {("spu", "register"): {"spu-registered"}, ("spu", "unregister"): {"spu-forgotten"},
            ("spu", "resolution"): _SPU_ENTRIES, ("spu", "update"): {"spu-rack"},
            ("rack", "offline"): _SPU_ENTRIES, ("rack", "online"): _SPU_ENTRIES}
_CACHE_SIZE = 10_000
# By stream, event and its time: an event id can come again for another event (a store
# rebuilt in this process, a rolled-back test), and its cached offset must not be reused.
_cache: OrderedDict[tuple[str, int, int], int] = OrderedDict()


def event_moments(events: Iterable[Event]) -> dict[int, int]:
    """``{event pk: log offset}`` for the events given (those the log no longer holds, or
    any when Redis cannot be read, are left out: their links fall back to their time)."""
    out: dict[int, int] = {}
    direct = []
    for event in events:
        if event.log_offset is not None:
            out[event.pk] = event.log_offset
        else:
            direct.append(event)
    if not direct:
        return out
    try:
        with engine().bound():
            stream, first, last = metadata_log.stream_key(), metadata_log.start(), \
                metadata_log.head()
            for event in direct:
                found = _moment(stream, event, first, last)
                if found is not None:
                    out[event.pk] = found
    except (RedisError, Unavailable):
        pass
    return out


def _moment(stream: str, event: Event, first: int, last: int) -> int | None:
    at_ms = int(event.at.timestamp() * 1000)
    key = (stream, event.pk, at_ms)
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    base = _last_written_by(at_ms, first, last)
    if base is None:
        return None
    found = _carrier(event, base) or max(base, 0)
    _cache[key] = found
    while len(_cache) > _CACHE_SIZE:
        _cache.popitem(last=False)
    return found


def _at(offset: int) -> int | None:
    entries = metadata_log.read(offset, 1)
    return int(entries[0].data.get("at") or 0) if entries else None


def _last_written_by(at_ms: int, first: int, last: int) -> int | None:
    """The last offset whose entry's time is at or before ``at_ms`` (entries' times are
    nearly monotone: a unit's carry its start)."""
    if last < first:
        return None
    start_at = _at(first)
    if start_at is None:
        return None
    if start_at > at_ms:
        return first - 1  # before the log's first entry (which may carry the change)
    low, high = first, last
    while low < high:
        middle = (low + high + 1) // 2
        middle_at = _at(middle)
        if middle_at is not None and middle_at <= at_ms:
            low = middle
        else:
            high = middle - 1
    return low


def _carrier(event: Event, base: int) -> int | None:
    """The offset of the entry that carried the event's change for each SPU it names (the
    last of them), looked for around ``base``: the entries' times carry their unit's start,
    which may precede the event's row. None when it names none or none is found."""
    kinds = _CHANGES.get((event.object_type, event.operation))
    spus = _spus_of(event)
    if not kinds or not spus:
        return None
    online = _direction(event)
    nearest: dict[int, int] = {}
    for entry in metadata_log.read(max(base - BACK, 0), BACK + SCAN):
        data = entry.data
        spu = data.get("spu")
        if data.get("type") not in kinds or spu not in spus or not _same_way(data, online):
            continue
        # The one nearest the event's time; on a tie, the later.
        if spu not in nearest or abs(entry.offset - base) <= abs(nearest[spu] - base):
            nearest[spu] = entry.offset
    return max(nearest.values()) if nearest else None


def _direction(event: Event) -> bool | None:
    """Whether the event brought its SPUs online (True), offline (False), or neither."""
    if event.object_type == "rack":
        return event.operation == "online"
    to = (event.params or {}).get("to") if event.operation == "resolution" else None
    return None if to is None else to == "Online"


def _same_way(entry: dict[str, Any], online: bool | None) -> bool:
    if online is None:
        return True
    if entry.get("type") == "spu-sync":
        return bool(entry.get("online")) == online
    return (entry.get("resolution") == "Online") == online


def _spus_of(event: Event) -> set[int]:
    if event.object_type == "spu":
        return {int(event.object_name)} if event.object_name.isdigit() else set()
    params: Any = event.params or {}
    return {s for s in params.get("spus", ()) if isinstance(s, int)}
