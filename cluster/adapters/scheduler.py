"""Where the follow-up of a replication step goes: a request for a tick, nothing more.

Candidate notices and election timers are state (core.replication.timers):
every step answers the notices and fires the timers that are due. What a step
leaves is the earliest election deadline, so the worker can tick then rather
than at the next beat; a lost request costs one beat. The engine is built with
a ``Scheduler`` (composition/bootstrap.py: Celery's, loaded on first use), so this
module names no task. Commands that step the services in-process pass their own
dispatcher instead (services/waiting.py).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass
class Followups:
    """What a step leaves for later: when the next election deadline falls (epoch ms)."""
    next_deadline_ms: int | None = None


Dispatch = Callable[[Followups], None]


class Scheduler(Protocol):
    def dispatch(self, followups: Followups) -> None:
        """Ask for a tick at the next deadline (a Celery countdown task)."""

    def kick(self) -> None:
        """Ask for a replication tick now rather than at the next beat."""
