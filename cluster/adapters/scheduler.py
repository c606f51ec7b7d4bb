"""Where the follow-up work of a replication step goes.

Services (cluster/services/replication.py) and settling need to enqueue
Celery tasks, while cluster/tasks.py calls the services: so the tasks module
installs a ``Scheduler`` here once, at app ready (``ClusterConfig.ready``),
and the dependency points one way. Commands that step the services
in-process pass their own dispatcher instead (adapters/settle.py).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol

from cluster.core.replication import Action, NotifyCandidate, StartElectionTimer


@dataclass
class Followups:
    """What a step leaves for later: candidate notices to answer, election timers to fire."""
    notices: list[NotifyCandidate] = field(default_factory=list)
    timers: list[StartElectionTimer] = field(default_factory=list)

    @classmethod
    def of(cls, actions: Iterable[Action]) -> Followups:
        out = cls()
        for a in actions:
            if isinstance(a, NotifyCandidate):
                out.notices.append(a)
            elif isinstance(a, StartElectionTimer):
                out.timers.append(a)
        return out


Dispatch = Callable[[Followups], None]


class Scheduler(Protocol):
    def dispatch(self, followups: Followups) -> None:
        """Hand notices and timers to whoever runs them (Celery tasks)."""

    def kick(self) -> None:
        """Ask for a replication tick now rather than at the next beat."""


_installed: list[Scheduler] = []


def install(scheduler: Scheduler) -> None:
    _installed[:] = [scheduler]


def scheduler() -> Scheduler:
    if not _installed:
        raise RuntimeError("no scheduler installed: the cluster app is not ready")
    return _installed[0]
