"""The event log: every service records what it changed and who asked.

Each logged event is also announced to open pages (cluster/live.py) once the
transaction commits, so a rolled-back change is never announced; pages throttle
their refreshes themselves (static/js/live.js).
"""
from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import transaction

from cluster.models import Event

Actor = Any  # a django User, a controller's name, or None for the system
log = logging.getLogger(__name__)


def actor_name(by: Actor) -> str:
    if by is None:
        return "system"
    if isinstance(by, str):
        return by
    return getattr(by, "get_username", lambda: str(by))()


def log_event(by: Actor, object_type: str, object_name: object, operation: str,
              params: dict[str, Any] | None = None, result: str = "") -> Event:
    event = Event.objects.create(actor=actor_name(by), object_type=object_type,
                                 object_name=str(object_name), operation=operation,
                                 params=params or {}, result=result)
    _announce_after_commit(object_type, str(object_name), operation)
    return event


def _announce_after_commit(object_type: str, object_name: str, operation: str) -> None:
    if getattr(settings, "LIVE_UPDATES", True):
        # on_commit drops the callback on rollback, so only stored changes are announced.
        transaction.on_commit(lambda: _announce(object_type, object_name, operation))


def _announce(object_type: str, object_name: str, operation: str) -> None:
    try:
        from cluster.live import CLUSTER_GROUP, publish

        publish(CLUSTER_GROUP, {"type": "cluster.changed", "object_type": object_type,
                                "object_name": object_name, "operation": operation})
    except Exception:  # noqa: BLE001  a page missing an update must never fail a write
        log.warning("live update not published", exc_info=True)
