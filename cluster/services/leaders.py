"""Leadership use cases: preferred-leader election, the automatic rebalancer, unclean override.

Each is one locked step of the replication state (``run_locked``): the core
decides (``leadership``, ``election.force_unclean``), the replication shell
mirrors leaders into the store and logs them. Follow-ups go to the worker when
one runs, or are answered here (services/waiting.LocalQueue).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from cluster.adapters.hot_state import HotState
from cluster.services.waiting import LocalQueue, wait_replicated, worker_running
from cluster.core import replication as core
from cluster.core.replication import (Action, ClusterState, LeaderMove, NotMoved,
                                      PreferredElection, ReplicationError,
                                      UncleanLeaderElected, UnknownPartition)
from cluster.errors import Conflict, NotFound
from cluster.models import Topic
from cluster.services.events import Actor, log_event
from cluster.services.replication import run_locked

REBALANCER = "leader-rebalancer"


@dataclass(frozen=True)
class PreferredReport:
    """What a preferred-leader election moved, and what it could not move and why."""
    moved: tuple[LeaderMove, ...]
    not_moved: tuple[NotMoved, ...]
    already_preferred: int
    topic: str | None = None

    @classmethod
    def of(cls, election: PreferredElection, topic: str | None) -> PreferredReport:
        return cls(election.moved, election.not_moved, len(election.already_preferred), topic)

    def as_json(self) -> dict[str, Any]:
        return {"type": "preferred", "topic": self.topic,
                "moved": [{"topic": m.topic, "partition": m.partition, "from": m.old,
                           "to": m.new} for m in self.moved],
                "not_moved": [{"topic": n.topic, "partition": n.partition,
                               "preferred": n.preferred, "reason": n.reason.value}
                              for n in self.not_moved],
                "already_preferred": self.already_preferred}


@dataclass(frozen=True)
class UncleanReport:
    """The operator's unclean election: the core's action, with the warning said once."""
    elected: UncleanLeaderElected

    @property
    def warning(self) -> str:
        a = self.elected
        return (f"unclean election: SPU {a.spu} leads {a.topic}/{a.partition}; "
                f"{a.offsets_lost} committed offset(s) [{a.new_hw}, {a.old_hw}) were given up")

    def as_json(self) -> dict[str, Any]:
        a = self.elected
        return {"type": "unclean", "topic": a.topic, "partition": a.partition, "spu": a.spu,
                "old_hw": a.old_hw, "new_hw": a.new_hw, "offsets_lost": a.offsets_lost,
                "warning": self.warning}


def run_now(step: Callable[[HotState], list[Action]], **kwargs: Any) -> list[Action]:
    """One locked step; its follow-ups go to the worker, or are answered here."""
    queue = None if worker_running() else LocalQueue()
    actions = run_locked(step, dispatch=queue, **kwargs)
    if queue is not None:
        queue.drain()
    return actions


def _known_topic(topic: str) -> None:
    if not Topic.objects.filter(name=topic).exists():
        raise NotFound(f"topic {topic!r} not found", field="topic")
    if not wait_replicated(topic):
        raise Conflict(f"topic {topic!r} is not provisioned, so it has no leaders", field="topic")


def _preferred(elect: Callable[[ClusterState], PreferredElection],
               topic: str | None) -> PreferredReport:
    """Run one preferred-leader election step under the lock and report it."""
    found: list[PreferredElection] = []

    def step(hot: HotState) -> list[Action]:
        found.append(elect(hot.state))
        return list(found[0].actions)

    run_now(step)
    return PreferredReport.of(found[0], topic)


def leader_elect_preferred(*, topic: str | None = None, by: Actor = None) -> PreferredReport:
    """Kafka's kafka-leader-election --election-type PREFERRED, for one topic or all."""
    if topic is not None:
        _known_topic(topic)
    report = _preferred(lambda state: core.elect_preferred_leaders(state, topic), topic)
    log_event(by, "leaders", topic or "*", "elect-preferred",
              {"moved": len(report.moved), "not_moved": len(report.not_moved)},
              result=f"{len(report.moved)} moved, {len(report.not_moved)} not moved")
    return report


def leader_rebalance(*, threshold: float | None = None) -> PreferredReport | None:
    """The periodic check (Kafka's auto.leader.rebalance): None when it is turned off."""
    if not settings.AUTO_LEADER_REBALANCE:
        return None
    if threshold is None:
        threshold = settings.LEADER_IMBALANCE_PER_SPU_PERCENTAGE / 100
    report = _preferred(lambda state: core.rebalance_leaders(state, threshold), None)
    if report.moved:
        log_event(REBALANCER, "leaders", "*", "rebalance", {"moved": len(report.moved),
                                                            "threshold": threshold})
    return report


def leader_elect_unclean(*, topic: str, partition: int, spu: int | None = None,
                         by: Actor = None) -> UncleanReport:
    """Operator override: a live replica outside the LRS leads one Offline partition."""
    _known_topic(topic)
    found: list[UncleanLeaderElected] = []

    def step(hot: HotState) -> list[Action]:
        actions = core.handle(hot.state, core.ElectUncleanLeader(topic, partition, spu))
        found.extend(a for a in actions if isinstance(a, UncleanLeaderElected))
        return actions

    try:
        run_now(step, keys=[(topic, partition)])
    except UnknownPartition:
        raise NotFound(f"partition {topic}/{partition} not found", field="partition") from None
    except ReplicationError as exc:
        raise Conflict(str(exc), field="spu" if spu is not None else "partition") from None
    report = UncleanReport(found[0])
    log_event(by, "partition", f"{topic}/{partition}", "elect-unclean", report.as_json(),
              result=report.warning)
    return report


