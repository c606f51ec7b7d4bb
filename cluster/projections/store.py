"""The database as a projection of the metadata log.

``catch_up`` applies every entry past ``ClusterState.applied_offset`` in offset
order, in one transaction per batch that also advances the offset: partition
status (replicas, preferred leader, leader, LRS, resolution, leader epoch),
topic replica maps, SPU statuses the engine decided, the rows of operators' intents
logged first (cluster/projections/intents.py), and events. Entries carry
whole statuses, so applying one twice changes nothing; the first write of the
transaction takes the state row's lock (PostgreSQL) or the database's write
lock (SQLite), so two processes catching up never interleave.

Whichever process committed entries calls ``catch_up`` right after; one that
died in between leaves them for the next caller (every unit of work, and the
reconcile beat), so nothing committed is ever missing from the store for long.
Whoever applies an entry also announces its events (to open pages and the JSON log):
the engine's tick often applies a command's entry between the command's append and its
own catch-up, which then finds nothing left to apply, and events returned to a caller
that drops them reached no page (a killed loop stayed "up" on every open page).
"""
from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from cluster.adapters import metadata_log
from cluster.adapters.metadata_log import Entry
from cluster.models import ClusterState, Event, Partition, Spu, Topic
from cluster.projections import aggregates, intents
from cluster.projections.announce import announce
from cluster.projections.events import events_of

log = logging.getLogger(__name__)
BATCH = 2000


def catch_up(known: Sequence[Entry] = ()) -> list[Event]:
    """Apply what the store has not applied yet; announce and return the events it wrote.

    ``known``: entries this process has just appended, at consecutive offsets, applied as
    they are in memory instead of read back (decoding a 100,000-partition topic's map cost
    0.17 s)."""
    kept = list(known)
    written: list[Event] = []
    if metadata_log.head() <= applied_offset():
        return written  # nothing new: no write lock taken (most units of work append nothing)
    while True:
        events: list[Event] = []
        with transaction.atomic():
            applied = _lock_applied_offset()
            entries = _read(applied + 1, kept)
            if entries:
                events = apply_entries(entries)
                ClusterState.objects.filter(pk=ClusterState.SINGLETON).update(
                    applied_offset=entries[-1].offset)
        announce(events)  # a batch rolled back raised: it is never announced
        written += events
        if len(entries) < BATCH:
            break
    return written


def _read(first: int, known: list[Entry]) -> list[Entry]:
    """Entries from ``first`` on (at most BATCH), those of ``known`` (consecutive offsets)
    taken from memory, the others read from the log."""
    known = [e for e in known if e.offset >= first]
    if not known:
        return metadata_log.read(first, BATCH)
    before = metadata_log.read(first, BATCH, last=known[0].offset - 1) if known[0].offset > first else []
    out = [*before, *known][:BATCH]
    if len(out) < BATCH:
        out += metadata_log.read(known[-1].offset + 1, BATCH - len(out))
    return out


def _lock_applied_offset() -> int:
    # A write first: it serialises catch-ups on both databases before anything is read.
    ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
    ClusterState.objects.filter(pk=ClusterState.SINGLETON).update(
        applied_offset=F("applied_offset"))
    return ClusterState.objects.values_list("applied_offset", flat=True).get(
        pk=ClusterState.SINGLETON)


def applied_offset() -> int:
    return ClusterState.objects.values_list("applied_offset", flat=True).filter(
        pk=ClusterState.SINGLETON).first() or 0


def apply_entries(entries: Iterable[Entry]) -> list[Event]:
    """Apply entries in order; the caller's transaction records the offset reached."""
    statuses: dict[tuple[int, int], list[Any]] = {}
    maps: dict[int, dict[int, list[int]]] = {}
    events: list[Event] = []
    for offset, data in entries:
        kind = data["type"]
        if kind == "partition":
            pk, index = data.get("topic_pk"), data["partition"]
            if pk is not None:
                statuses[(pk, index)] = _row(data)
                if "replicas" in (data.get("changed") or {}):
                    maps.setdefault(pk, {})[index] = data["replicas"]
        elif kind == "topic-replicated" and data.get("topic_pk") is not None:
            for index, row in enumerate(data["statuses"]):
                statuses[(data["topic_pk"], index)] = _row(dict(zip(
                    ("replicas", "leader", "lrs", "resolution", "epoch"), row)))
        elif kind == "spu":
            _apply_spu(data)
        elif kind == "hot-state-lost":
            _apply_loss(data)
        elif intents.is_log_first(data):
            # The rows an operator's command asked for; an entry before it, of a topic it
            # deletes, must not write rows that are gone.
            _flush_pending(statuses, maps, data)
            made = intents.apply(data)
            for event in made:
                event.log_offset = offset
            events += made
        for event in events_of(offset, data):
            event.log_offset = offset
            events.append(event)
    aggregates.apply_changes(statuses)  # before the rows change: it reads what they counted
    _write_statuses(statuses)
    _write_maps(maps)
    # Several events of one entry share its offset: only the first keeps it (the column is
    # unique); the rest are written with it, so a replay still writes them once.
    seen: set[int] = set()
    for event in events:
        if event.log_offset in seen:
            event.log_offset = None
        else:
            seen.add(event.log_offset)
    _insert_events(events)
    return events


def partition_rows_moved(first: int, last: int) -> set[tuple[int, int]] | None:
    """The (topic pk, index) of every partition row whose status columns (replicas,
    leader, LRS, resolution, epoch) the entries ``first`` to ``last`` wrote, as
    ``apply_entries`` applies them; None when they may have written any other (an
    operator's intent that makes or drops a topic's rows), or when the log no longer
    holds them all. A reader that keeps the rows (healing/snapshot.py) reads again only
    these."""
    if last < first:
        return set()
    if metadata_log.start() > first:
        return None
    found = metadata_log.read_holding(first, last, _ROWS_NEEDLES, batch=BATCH,
                                      contiguous=True)
    if found is None:
        return None  # a gap: trimmed meanwhile
    moved: set[tuple[int, int]] = set()
    for entry in found:  # (a HW checkpoint, an SPU's or an outage's entry: not decoded)
        data = entry.data
        kind = data["type"]
        if kind == "partition":
            if data.get("topic_pk") is not None:
                moved.add((data["topic_pk"], data["partition"]))
        elif kind == "topic-replicated":
            if data.get("topic_pk") is not None:
                moved.update((data["topic_pk"], i) for i in range(len(data["statuses"])))
        elif intents.is_log_first(data) and intents.writes_partition_rows(data):
            return None
    return moved


# Every entry ``partition_rows_moved`` must decode holds one of these in its JSON text
# (its type, or the log-first mark of an intent); an entry holding one may still name no row.
_ROWS_NEEDLES = tuple(map(metadata_log.needle, ("partition", "topic-replicated",
                                                  intents.LOG_FIRST)))


_EVENT_FIELDS = ("at", "actor", "object_type", "object_name", "operation", "params",
                 "result", "log_offset")


def _insert_events(events: list[Event]) -> None:
    """Store ``events`` as ``bulk_create(..., ignore_conflicts=True)`` would (an event whose
    log offset is stored already is a replay's, left as it is), as one prepared INSERT run
    per event: the ORM prepares every field of every row, 0.36 s of a failover's tick at
    100,000 partitions (6,000 events). Their time is stamped once, as the batch's."""
    if not events:
        return
    at = timezone.now()
    ops = connection.ops
    stamp = ops.adapt_datetimefield_value(at)
    meta = Event._meta
    columns = ", ".join(_quoted(meta.get_field(name).column) for name in _EVENT_FIELDS)
    sql = (f"INSERT INTO {_quoted(meta.db_table)} ({columns}) VALUES "
           f"({', '.join(['%s'] * len(_EVENT_FIELDS))}) ON CONFLICT DO NOTHING")
    rows = []
    for event in events:
        event.at = at
        rows.append((stamp, event.actor, event.object_type, event.object_name,
                     event.operation, ops.adapt_json_value(event.params, None),
                     event.result, event.log_offset))
    with connection.cursor() as cursor:
        cursor.executemany(sql, rows)


def _flush_pending(statuses: dict[tuple[int, int], list[Any]],
                   maps: dict[int, dict[int, list[int]]], data: dict[str, Any]) -> None:
    """Before a topic is deleted, write the statuses the batch holds so far: the counts
    it uncounts must be the rows' latest, and the deletion then removes them."""
    if data["type"] != "topic-delete" or not statuses:
        return
    aggregates.apply_changes(statuses)
    _write_statuses(statuses)
    _write_maps(maps)
    statuses.clear()
    maps.clear()


def _row(data: dict[str, Any]) -> list[Any]:
    replicas = data["replicas"]
    return [_ints_json(replicas), replicas[0] if replicas else 0, data["leader"],
            _ints_json(data["lrs"]), data["resolution"], data["epoch"]]


def _ints_json(values: list[int]) -> str:
    """``json.dumps(values)``, the same text, for a list of ints (SPU ids) without the
    encoder's machinery: 2 us a list was 0.35 s of a 100,000-partition topic's first tick."""
    for v in values:
        if type(v) is not int:  # a bool, None, a str: the encoder's own text
            return json.dumps(values)
    return "[" + ", ".join(map(str, values)) + "]"


def _write_statuses(statuses: dict[tuple[int, int], list[Any]]) -> None:
    if not statuses:
        return
    table = Partition._meta.db_table
    sql = (f"UPDATE {table} SET replicas = %s, initial_leader = %s, leader = %s, lrs = %s, "
           f"resolution = %s, epoch = %s WHERE topic_id = %s AND {_quoted('index')} = %s")
    with connection.cursor() as cursor:
        cursor.executemany(sql, [[*row, pk, index] for (pk, index), row in statuses.items()])


def _quoted(column: str) -> str:
    return connection.ops.quote_name(column)


# Partitions whose replicas one statement writes into their topic's map (SQLite takes at
# most 127 arguments a function; a pair is two).
MAP_BATCH = 50


def _write_maps(maps: dict[int, dict[int, list[int]]]) -> None:
    """Each partition's replicas into its topic's map, element by element in the database:
    read and written back whole, a move's end cost a 100,000-partition topic's map
    decoded and encoded again (55 ms of the unit that ended it, under every lease). An
    index past the map's end is left alone, as before."""
    table, pk_column = _quoted(Topic._meta.db_table), _quoted(Topic._meta.pk.column)
    with connection.cursor() as cursor:
        for pk, changed in maps.items():
            items = sorted(changed.items())
            for at in range(0, len(items), MAP_BATCH):
                expression, params = _elements_replaced(items[at:at + MAP_BATCH])
                cursor.execute(f"UPDATE {table} SET {_quoted('replica_map')} = {expression} "
                               f"WHERE {pk_column} = %s", [*params, pk])


def _elements_replaced(items: list[tuple[int, list[int]]]) -> tuple[str, list[Any]]:
    """The SQL of the map with these elements replaced (none added), and its parameters."""
    column, params = _quoted("replica_map"), []
    if connection.vendor == "postgresql":  # a jsonb column
        expression = column
        for index, replicas in items:
            expression = f"jsonb_set({expression}, %s, %s::jsonb, false)"
            params += [[str(index)], json.dumps(replicas)]
        return expression, params
    pairs = []
    for index, replicas in items:
        pairs.append("%s, json(%s)")
        params += [f"$[{index}]", json.dumps(replicas)]
    return f"json_replace({column}, {', '.join(pairs)})", params


def _apply_spu(data: dict[str, Any]) -> None:
    Spu.objects.filter(pk=data["spu"]).update(resolution=data["resolution"])


def _apply_loss(data: dict[str, Any]) -> None:
    for topic in data["topics"]:
        Topic.objects.filter(name=topic).update(reason=data["reason"])
