"""The event log as JSON lines (LOG_FORMAT=json): one line per stored event.

Lines are written after the transaction commits, so a rolled-back change
leaves no line, as it leaves no row.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, TypedDict

from django.db import transaction

from cluster.models import Event
from webapp.logconfig import EVENT_LOGGER

log = logging.getLogger(EVENT_LOGGER)


class EventLine(TypedDict):
    id: int | None
    at: str | None
    actor: str
    object_type: str
    object_name: str
    operation: str
    params: dict[str, Any]
    result: str


def event_line(event: Event) -> EventLine:
    return EventLine(id=event.pk, at=event.at.isoformat() if event.at else None,
                     actor=event.actor, object_type=event.object_type,
                     object_name=event.object_name, operation=event.operation,
                     params=event.params, result=event.result)


def log_events(events: Sequence[Event]) -> None:
    """Queue a JSON line per event for after commit; free when JSON logs are off."""
    if events and log.isEnabledFor(logging.INFO):
        transaction.on_commit(lambda: _write(events))


def _write(events: Sequence[Event]) -> None:
    for event in events:
        log.info(event.operation, extra={"event": event_line(event)})
