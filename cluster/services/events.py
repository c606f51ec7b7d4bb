"""The event log: every service records what it changed and who asked."""
from __future__ import annotations

from typing import Any

from cluster.models import Event

Actor = Any  # a django User, a controller's name, or None for the system


def actor_name(by: Actor) -> str:
    if by is None:
        return "system"
    if isinstance(by, str):
        return by
    return getattr(by, "get_username", lambda: str(by))()


def log_event(by: Actor, object_type: str, object_name: object, operation: str,
              params: dict[str, Any] | None = None, result: str = "") -> Event:
    return Event.objects.create(actor=actor_name(by), object_type=object_type,
                                object_name=str(object_name), operation=operation,
                                params=params or {}, result=result)
