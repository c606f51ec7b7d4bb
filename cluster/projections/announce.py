"""Announcing logged events: to open pages (live batches, once the transaction commits,
with the changed SPU or topic as stored then) and to the JSON log.

A projection of what was committed, shared by the services' ``log_event`` and the
engine's unit of work; it lives here so the engine needs no service (issue 32's layers).
"""
from __future__ import annotations

import logging
from collections.abc import Iterable

from django.conf import settings
from django.db import transaction

from cluster.adapters.live_batches import LIVE_EVENTS, stage_many
from cluster.live import CLUSTER_GROUP, EventRow, LiveData, SpuRow, TopicRow, topic_group
from cluster.metrics.logs import log_events
from cluster.models import Event, Spu, Topic
from cluster.selectors.sql import in_lists
from cluster.projections.live import cluster_load

log = logging.getLogger(__name__)


def announce(events: list[Event]) -> None:
    """Projected events reach open pages and the JSON log as logged ones do: staged
    together once the transaction commits (one Redis round trip for a unit's events:
    a failover at 100,000 partitions logs 6,000, and one round trip each was half of
    its tick)."""
    if events and getattr(settings, "LIVE_UPDATES", True):
        # on_commit drops the callback on rollback, so only stored changes are announced.
        transaction.on_commit(lambda: _announce(events))
    log_events(events)


def announce_after_commit(event: Event) -> None:
    if getattr(settings, "LIVE_UPDATES", True):
        transaction.on_commit(lambda: _announce([event]))


def _announce(events: list[Event]) -> None:
    """Each event to the cluster group (a topic's also to the topic's), with the changed
    SPU or topic as stored now: read once per object, whatever its events. A group's
    batch carries its newest ``LIVE_EVENTS`` events only (live_batches), so only those
    are made rows, each once."""
    try:
        groups: dict[str, tuple[list[Event], dict[tuple[str, str], LiveData]]] = {}
        stored: dict[tuple[str, str], LiveData] = {}
        load: set[str] = set()
        stored.update(_objects_rows(events))
        for event in events:
            obj = (event.object_type, event.object_name)
            names = [CLUSTER_GROUP]
            if event.object_type == "topic":
                names.append(topic_group(event.object_name))
            if event.object_type in {"spu", "topic", "spu-group"}:
                load.add(CLUSTER_GROUP)
            for name in names:
                kept, objects = groups.setdefault(name, ([], {}))
                kept.append(event)
                objects[obj] = stored[obj]
        rows: dict[int, EventRow] = {}  # by id(): an event in two groups is one row
        for kept, _ in groups.values():
            for event in kept[-LIVE_EVENTS:]:
                rows.setdefault(id(event), event_row(event))
        stage_many({name: _batch([rows[id(e)] for e in kept[-LIVE_EVENTS:]], objects.values())
                    for name, (kept, objects) in groups.items()}, load=load, loads=cluster_load)
    except Exception:  # noqa: BLE001  a page missing an update must never fail a write
        log.warning("live update not published", exc_info=True)


def _batch(rows: list[EventRow], objects: Iterable[LiveData]) -> LiveData:
    batch: LiveData = {"events": rows}
    for data in objects:
        if "topics" in data:
            batch.setdefault("topics", []).extend(data["topics"])
        if "spus" in data:
            batch.setdefault("spus", []).extend(data["spus"])
    return batch


def event_row(event: Event) -> EventRow:
    return {"at": event.at.isoformat(), "actor": event.actor,
            "object_type": event.object_type, "object_name": event.object_name,
            "operation": event.operation, "params": event.params, "result": event.result,
            "log_offset": event.log_offset, "id": event.pk}


def _objects_rows(events: list[Event]) -> dict[tuple[str, str], LiveData]:
    """Each changed object's state as stored now (by type and name), so a page needs no
    fetch to show it: a query for the topics and one for the SPUs, whatever their number
    (a query an object was a second of the first tick of 2,000 topics)."""
    out: dict[tuple[str, str], LiveData] = {}  # an object no row holds shows as nothing
    topics: set[str] = set()
    spus: dict[int, set[str]] = {}  # by id, the names the events give it
    for e in events:
        kind, name = e.object_type, e.object_name
        if kind == "topic":
            topics.add(name)
            out[(kind, name)] = {"topics": []}
        elif kind == "spu" and name.isdigit():
            spus.setdefault(int(name), set()).add(name)
            out[(kind, name)] = {"spus": []}
        else:
            out[(kind, name)] = {}
    for names in in_lists(sorted(topics)):
        for r in Topic.objects.filter(name__in=names).values("name", "resolution", "reason"):
            out[("topic", r["name"])]["topics"].append(
                TopicRow(name=r["name"], resolution=r["resolution"], reason=r["reason"]))
    for ids in in_lists(sorted(spus)):
        for r in Spu.objects.filter(pk__in=ids).values("id", "resolution", "rack"):
            for name in spus[r["id"]]:
                out[("spu", name)]["spus"].append(
                    SpuRow(id=r["id"], resolution=r["resolution"], rack=r["rack"] or ""))
    return out
