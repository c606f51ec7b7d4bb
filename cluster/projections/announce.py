"""Announcing logged events: to open pages (live batches, once the transaction commits,
with the changed SPU or topic as stored then) and to the JSON log.

A projection of what was committed, shared by the services' ``log_event`` and the
engine's unit of work; it lives here so the engine needs no service (issue 32's layers).
"""
from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction

from cluster.adapters.live_batches import stage
from cluster.live import CLUSTER_GROUP, EventRow, LiveData, SpuRow, TopicRow, topic_group
from cluster.metrics.logs import log_events
from cluster.models import Event, Spu, Topic
from cluster.projections.live import cluster_load

log = logging.getLogger(__name__)


def announce(events: list[Event]) -> None:
    """Projected events reach open pages and the JSON log as logged ones do."""
    for event in events:
        announce_after_commit(event)
    log_events(events)


def announce_after_commit(event: Event) -> None:
    if getattr(settings, "LIVE_UPDATES", True):
        # on_commit drops the callback on rollback, so only stored changes are announced.
        transaction.on_commit(lambda: _announce(event))


def _announce(event: Event) -> None:
    try:
        row = event_row(event)
        stage(CLUSTER_GROUP, {"events": [row], **_object_rows(event)},
              load=event.object_type in {"spu", "topic", "spu-group"}, loads=cluster_load)
        if event.object_type == "topic":
            stage(topic_group(event.object_name), {"events": [row], **_object_rows(event)})
    except Exception:  # noqa: BLE001  a page missing an update must never fail a write
        log.warning("live update not published", exc_info=True)


def event_row(event: Event) -> EventRow:
    return {"at": event.at.isoformat(), "actor": event.actor,
            "object_type": event.object_type, "object_name": event.object_name,
            "operation": event.operation, "params": event.params, "result": event.result,
            "log_offset": event.log_offset, "id": event.pk}


def _object_rows(event: Event) -> LiveData:
    """The changed object's state as stored now, so a page needs no fetch to show it."""
    if event.object_type == "topic":
        rows = Topic.objects.filter(name=event.object_name).values("name", "resolution", "reason")
        return {"topics": [TopicRow(name=r["name"], resolution=r["resolution"], reason=r["reason"])
                           for r in rows]}
    if event.object_type == "spu" and event.object_name.isdigit():
        rows = Spu.objects.filter(pk=int(event.object_name)).values("id", "resolution", "rack")
        return {"spus": [SpuRow(id=r["id"], resolution=r["resolution"], rack=r["rack"] or "")
                         for r in rows]}
    return {}
