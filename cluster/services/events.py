"""The event log: every service records what it changed and who asked; operators'
changes are intents appended to the metadata log first (``record_intent``), whose event
rows the store's projection writes.

Each logged event is also announced to open pages (cluster/live.py) once the
transaction commits, with the changed SPU or topic as stored then, so a
rolled-back change is never announced; the live batches coalesce them.
"""
from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, TypeAlias

import redis

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser

from django.db import connection, transaction

from cluster.adapters import metadata_log
from cluster.engine.engine import current as engine
from cluster.engine.store_identity import HotStateMismatch, ensure_hot_state_is_ours
from cluster.metrics.logs import log_events
from cluster.models import Event
from cluster.projections import intents as intent_rows
from cluster.projections import store as store_projection
from cluster.projections.announce import announce, announce_after_commit

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

    The row is written at once. A unit of work logs its events as entries of its own
    commit instead (``u.log`` / ``hot.log``, an ``event`` entry: healing/journal.py), which
    the store's projection writes once the commit landed.
    """
    fields = {"actor": actor_name(by), "object_type": object_type,
              "object_name": str(object_name), "operation": operation,
              "params": params or {}, "result": result}
    event = Event.objects.create(**fields)
    announce_after_commit(event)
    log_events([event])
    return event


def log_intent(by: Actor, entry: dict[str, Any]) -> None:
    """An operator's change, appended to the metadata log with who made it as soon as the
    database committed it, so the log holds it before any tick adopts the rows (issue 32).

    A rolled-back change logs nothing. With Redis unreachable the change stands as before
    (the row is still the truth the engine adopts) and only its intent is missing."""
    stamped = {**entry, "by": actor_name(by)}
    transaction.on_commit(lambda: _append_intent(stamped))


def _append_intent(entry: dict[str, Any]) -> None:
    try:
        with engine().bound():
            # As before any write to the hot state: only into this store's own Redis (a
            # fresh store claims it here, before the store could apply the entry).
            ensure_hot_state_is_ours()
            metadata_log.append_intent(entry, floor=store_projection.applied_offset())
    except (redis.exceptions.RedisError, HotStateMismatch) as exc:
        log.warning("intent %s not logged: %s", entry["type"], exc)


def record_intent(by: Actor, entry: dict[str, Any], *, inside: bool = False) -> int | None:
    """Log first (issue 32): append an operator's validated change to the metadata log,
    then bring the store's projection up to it, which writes the rows and the event rows
    from the entry; returns its offset once the rows are there.

    Two cases write the rows at once instead, through the same projection, and log the
    entry after them as before: a caller's own transaction (its rollback must undo the
    change, and the log cannot be rolled back), and a Redis that cannot be written (the
    rows are the truth the engine adopts; only the entry is missing). Both return None.
    ``inside``: the caller opened its transaction for this write (to hold a lock while it
    decides and logs), so the log is still written first.
    """
    offsets = record_intents(by, [entry], inside=inside)
    return offsets[0] if offsets else None


def record_intents(by: Actor, entries: list[dict[str, Any]], *, inside: bool = False
                   ) -> list[int]:
    """``record_intent`` of several changes made together (an SPU group's SPUs): one append
    of them all at consecutive offsets, one catch-up; their offsets ([] when their rows were
    written at once, in the two cases ``record_intent`` names)."""
    if not entries:
        return []
    stamped = [{**entry, "by": actor_name(by)} for entry in entries]
    if connection.in_atomic_block and not inside:
        for one, entry in zip(stamped, entries):
            _apply_now(one)
            log_intent(by, entry)
        return []
    at = int(time.time() * 1000)
    logged = [{**one, intent_rows.LOG_FIRST: True, "at": at} for one in stamped]
    with engine().bound():  # the store's id read once, for the append and the catch-up
        try:
            ensure_hot_state_is_ours()
            offsets = metadata_log.append_intents(
                logged, floor=store_projection.applied_offset())
        except (redis.exceptions.RedisError, HotStateMismatch) as exc:
            log.warning("intents %s not logged, their rows written at once: %s",
                        ", ".join(sorted({e["type"] for e in entries})), exc)
            with transaction.atomic():
                for one in stamped:
                    _apply_now(one)
            return []
        # The catch-up announces the events it writes; the engine may have applied (and
        # announced) these entries first, between the append and here.
        store_projection.catch_up(
            known=[metadata_log.Entry(o, e) for o, e in zip(offsets, logged)])
    return offsets


def _apply_now(entry: dict[str, Any]) -> None:
    if "at" not in entry:
        entry["at"] = int(time.time() * 1000)
    events = intent_rows.apply(entry)
    Event.objects.bulk_create(events)
    announce(events)
