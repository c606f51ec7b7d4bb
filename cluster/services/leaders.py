"""Leadership use cases: preferred-leader election, the automatic rebalancer, unclean override.

Each is one unit of work of the engine (``with engine.unit(...) as u``): the core
decides (``leadership``, ``election.force_unclean``) on the loaded state, and the
commit mirrors leaders into the store and logs them. Follow-ups go to the worker when
one runs, or are answered here (services/waiting.LocalQueue).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from cluster.services.waiting import LocalQueue, wait_replicated, worker_running
from cluster.core import replication as core
from cluster.core.replication import (ClusterState, Key, LeaderMove, NotMoved,
                                      PreferredElection, ReplicationError,
                                      UncleanLeaderElected, UnknownPartition)
from cluster.errors import Conflict, NotFound
from cluster.engine.engine import current as engine
from cluster.engine.unit import Unit
from cluster.metrics.figures import imbalance_ratio, spu_counts
from cluster.core.spus import SpuResolution
from cluster.models import Partition, Spu, Topic
from cluster.services.events import Actor, log_event

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


@contextmanager
def unit_now(keys: list[Key] | None = None) -> Iterator[Unit]:
    """One unit of work (the sets of ``keys``, or the whole state); once it committed, its
    follow-ups go to the worker, or are answered here."""
    queue = None if worker_running() else LocalQueue()
    with engine().unit(keys=keys, whole=keys is None, dispatch=queue) as u:
        yield u
    if queue is not None:
        queue.drain()


def _known_topic(topic: str) -> None:
    if not Topic.objects.filter(name=topic).exists():
        raise NotFound(f"topic {topic!r} not found", field="topic")
    if not wait_replicated(topic):
        raise Conflict(f"topic {topic!r} is not provisioned, so it has no leaders", field="topic")


def _preferred(elect: Callable[[ClusterState], PreferredElection],
               topic: str | None, keys: list[Key] | None = None) -> PreferredReport:
    """Run one preferred-leader election in a unit of work (the sets of ``keys``, or the
    whole state) and report it."""
    with unit_now(keys) as u:
        election = elect(u.state.state)
        u.actions += election.actions
    return PreferredReport.of(election, topic)


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
    keys = None  # a threshold out of range: the core refuses it, on the whole state
    if 0 <= threshold <= 1:
        keys = _preferred_partitions(_over_in_counts(threshold))
        if not keys:
            return PreferredReport.of(PreferredElection((), (), ()), None)  # as the core says
    report = _preferred(lambda state: core.rebalance_leaders(state, threshold), None, keys)
    if report.moved:
        log_event(REBALANCER, "leaders", "*", "rebalance", {"moved": len(report.moved),
                                                            "threshold": threshold})
    return report


def _over_in_counts(threshold: float) -> set[int]:
    """The online SPUs whose imbalance is over ``threshold`` in the counts the store keeps
    beside the rows (cluster/projections/aggregates.py), read without a replica set.

    The check takes a unit only when they name one: loading every set, under every
    shard's lease, cost 3.5 s at 100,000 partitions and 16 s at 300,000 in a worker that
    held none of them, every 30 s, with every shard waiting. The counts are the log's
    projection, so they follow it within a tick. Unlike the core they count partitions in
    a replica move too: a rebalance that only leaving them out would call for waits for
    the moves to end. An SPU that is not online leads nothing the core could give it (its
    partitions are "not moved: offline"), and during an outage it is over the threshold
    at every check: 5 s of every lease at 100,000 partitions, every 30 s, for nothing."""
    counts = spu_counts()
    online = set(Spu.objects.filter(resolution=SpuResolution.ONLINE.value)
                 .values_list("id", flat=True))
    return {spu for spu, preferred in counts.preferred.items()
            if spu in online and imbalance_ratio(preferred, counts.preferred_leading[spu])
            > threshold}


def _preferred_partitions(spus: set[int]) -> list[Key]:
    """Every partition whose preferred leader is one of ``spus``, from the rows: an SPU's
    imbalance is of those partitions alone, so the core decides on them as on the whole
    state, and elects among them (a partition whose replicas changed in the tick the rows
    trail is weighed at the next check)."""
    if not spus:
        return []
    names = dict(Topic.objects.values_list("pk", "name"))
    return sorted((names[t], index) for t, index in Partition.objects.filter(
        initial_leader__in=sorted(spus)).values_list("topic_id", "index") if t in names)


def leader_elect_unclean(*, topic: str, partition: int, spu: int | None = None,
                         by: Actor = None) -> UncleanReport:
    """Operator override: a live replica outside the LRS leads one Offline partition."""
    _known_topic(topic)
    try:
        with unit_now(keys=[(topic, partition)]) as u:
            actions = core.handle(u.state.state, core.ElectUncleanLeader(topic, partition, spu))
            u.actions += actions
    except UnknownPartition:
        raise NotFound(f"partition {topic}/{partition} not found", field="partition") from None
    except ReplicationError as exc:
        raise Conflict(str(exc), field="spu" if spu is not None else "partition") from None
    report = UncleanReport(next(a for a in actions if isinstance(a, UncleanLeaderElected)))
    log_event(by, "partition", f"{topic}/{partition}", "elect-unclean", report.as_json(),
              result=report.warning)
    return report


