"""The event log: every service records what it changed and who asked.

Each logged event is also announced to open pages (cluster/live.py) once the
transaction commits, with the changed SPU or topic as stored then, so a
rolled-back change is never announced; the live batches coalesce them.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser

from cluster.adapters.metadata_log import note
from cluster.metrics.logs import log_events
from cluster.models import Event
from cluster.projections.announce import announce_after_commit

# Who asked: a signed-in user, a controller's or a command's name, or None for the system.
Actor: TypeAlias = "AbstractBaseUser | AnonymousUser | str | None"


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
    announce_after_commit(event)
    log_events([event])
    return event
