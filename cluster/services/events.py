"""The event log: every service records what it changed and who asked.

Each logged event is also announced to open pages (cluster/live.py) once the
transaction commits, with the changed SPU or topic as stored then, so a
rolled-back change is never announced; the live batches coalesce them.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser

from django.conf import settings
from django.db import transaction

from cluster.adapters.live_batches import stage
from cluster.adapters.metadata_log import note
from cluster.live import CLUSTER_GROUP, EventRow, LiveData, SpuRow, TopicRow, topic_group
from cluster.metrics.logs import log_events
from cluster.models import Event, Spu, Topic

# Who asked: a signed-in user, a controller's or a command's name, or None for the system.
Actor: TypeAlias = "AbstractBaseUser | AnonymousUser | str | None"
log = logging.getLogger(__name__)


def actor_name(by: Actor) -> str:
    if by is None:
        return "system"
    if isinstance(by, str):
        return by
    return getattr(by, "get_username", lambda: str(by))()


def log_event(by: Actor, object_type: str, object_name: object, operation: str,
              params: dict[str, Any] | None = None, result: str = "") -> Event:
    """Record what changed and who asked.

    Inside a unit of work of the replication engine the event is an entry of its
    metadata-log commit, written to the event page by the store's projection once the
    commit landed (a refused commit logs nothing); elsewhere it is written at once.
    """
    fields = {"actor": actor_name(by), "object_type": object_type,
              "object_name": str(object_name), "operation": operation,
              "params": params or {}, "result": result}
    if note({"type": "event", **fields}):
        return Event(**fields)
    event = Event.objects.create(**fields)
    _announce_after_commit(event)
    log_events([event])
    return event


def announce(events: list[Event]) -> None:
    """Projected events reach open pages and the JSON log as logged ones do."""
    for event in events:
        _announce_after_commit(event)
    log_events(events)


def _announce_after_commit(event: Event) -> None:
    if getattr(settings, "LIVE_UPDATES", True):
        # on_commit drops the callback on rollback, so only stored changes are announced.
        transaction.on_commit(lambda: _announce(event))


def _announce(event: Event) -> None:
    try:
        row = event_row(event)
        stage(CLUSTER_GROUP, {"events": [row], **_object_rows(event)},
              load=event.object_type in {"spu", "topic", "spu-group"})
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
        return {"topics": [TopicRow(**r) for r in rows]}
    if event.object_type == "spu" and event.object_name.isdigit():
        rows = Spu.objects.filter(pk=int(event.object_name)).values("id", "resolution", "rack")
        return {"spus": [SpuRow(id=r["id"], resolution=r["resolution"], rack=r["rack"] or "")
                         for r in rows]}
    return {}
