"""Preferred-leader election and the leader imbalance rule (Kafka's, on 001's sets).

The preferred leader of a partition is its first replica. Kafka's
``kafka-leader-election --election-type PREFERRED`` moves leadership back to it
where it is live and in the ISR (here: the LRS); ``auto.leader.rebalance``
runs that for the SPUs whose imbalance -- partitions they should lead but do
not, over partitions they should lead -- exceeds
``leader.imbalance.per.broker.percentage`` (10 %). Partitions with a
reassignment in flight are left out of both, as Kafka does: their replica list
is about to change.

A leadership move is an SC decision installed directly (``transfer_leadership``):
the new leader is a live LRS member, so it holds every committed record; acks=all
records still pending on the old leader fail with NOT_LEADER so the producer
retries, as Kafka's NOT_LEADER_OR_FOLLOWER does.
"""
from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from .acks import fail_pending
from .election import install_leader, is_eligible
from .events import NOT_LEADER, Action
from .state import ClusterState, Key, ReplicaSet, ReplicationError, Resolution

DEFAULT_IMBALANCE_THRESHOLD = 0.10


class NotMovedReason(str, Enum):
    NO_LEADER = "the partition has no leader (election in progress or offline)"
    PREFERRED_OFFLINE = "the preferred leader's SPU is offline"
    PREFERRED_NOT_IN_LRS = "the preferred leader is not in the LRS"
    MOVE_IN_FLIGHT = "a reassignment is in flight"


class LeaderMove(NamedTuple):
    topic: str
    partition: int
    old: int
    new: int


class NotMoved(NamedTuple):
    topic: str
    partition: int
    preferred: int
    reason: NotMovedReason


class PreferredElection(NamedTuple):
    """What a preferred-leader election did (or, from ``plan_preferred``, would do)."""

    moved: tuple[LeaderMove, ...]
    not_moved: tuple[NotMoved, ...]
    already_preferred: tuple[Key, ...]
    actions: tuple[Action, ...] = ()


class LeaderImbalance(NamedTuple):
    spu: int
    preferred: int  # partitions it is the preferred leader of
    not_led: int  # of those, partitions another SPU leads
    ratio: float


def transfer_leadership(state: ClusterState, rs: ReplicaSet, spu: int,
                        reason: str) -> list[Action]:
    """Move an Online set's leadership to ``spu``, a live LRS member."""
    if rs.resolution is not Resolution.ONLINE or not is_eligible(rs, spu, state.spus):
        raise ReplicationError(f"{rs.topic}/{rs.partition}: SPU {spu} cannot take leadership")
    state.steady.leave(rs)
    old = rs.leader
    actions = fail_pending(rs, NOT_LEADER, f"leadership moved from SPU {old} to SPU {spu}: {reason}")
    # A new attempt makes any election notice still in flight stale.
    rs.attempt += 1
    return actions + install_leader(state, rs, spu, old=old)


def _obstacle(state: ClusterState, rs: ReplicaSet) -> NotMovedReason | None:
    preferred = rs.replicas[0]
    if rs.move is not None:
        return NotMovedReason.MOVE_IN_FLIGHT
    if rs.resolution is not Resolution.ONLINE:
        return NotMovedReason.NO_LEADER
    if not state.spus.get(preferred):
        return NotMovedReason.PREFERRED_OFFLINE
    if preferred not in rs.lrs:
        return NotMovedReason.PREFERRED_NOT_IN_LRS
    return None


def _selected(state: ClusterState, topic: str | None) -> list[ReplicaSet]:
    if topic is not None and topic not in state.topics:
        raise ReplicationError(f"unknown topic {topic!r}")
    return [state.replica_sets[k] for k in sorted(state.replica_sets)
            if topic is None or k[0] == topic]


def plan_preferred(state: ClusterState, topic: str | None = None, *,
                   spus: frozenset[int] | None = None) -> PreferredElection:
    """Which partitions a preferred election would move, without changing anything.

    ``spus`` limits it to partitions whose preferred leader is one of them.
    """
    moved, not_moved, already = [], [], []
    for rs in _selected(state, topic):
        preferred = rs.replicas[0]
        if spus is not None and preferred not in spus:
            continue
        if rs.leader == preferred:
            already.append(rs.key)
            continue
        reason = _obstacle(state, rs)
        if reason is None:
            moved.append(LeaderMove(rs.topic, rs.partition, rs.leader, preferred))
        else:
            not_moved.append(NotMoved(rs.topic, rs.partition, preferred, reason))
    return PreferredElection(tuple(moved), tuple(not_moved), tuple(already))


def elect_preferred_leaders(state: ClusterState, topic: str | None = None, *,
                            spus: frozenset[int] | None = None) -> PreferredElection:
    """Move leadership to each preferred leader that is live and in the LRS."""
    plan = plan_preferred(state, topic, spus=spus)
    actions: list[Action] = []
    for m in plan.moved:
        rs = state.replica_sets[(m.topic, m.partition)]
        actions += transfer_leadership(state, rs, m.new, "preferred leader election")
    return plan._replace(actions=tuple(actions))


def leader_imbalance(state: ClusterState) -> dict[int, LeaderImbalance]:
    """Per SPU that is some partition's preferred leader (moving partitions left out)."""
    counts: dict[int, list[int]] = {}
    for rs in state.replica_sets.values():
        if rs.move is not None:
            continue
        c = counts.setdefault(rs.replicas[0], [0, 0])
        c[0] += 1
        c[1] += rs.leader != rs.replicas[0]
    return {spu: LeaderImbalance(spu, n, off, off / n) for spu, (n, off) in sorted(counts.items())}


def imbalanced_spus(state: ClusterState,
                    threshold: float = DEFAULT_IMBALANCE_THRESHOLD) -> list[int]:
    """SPUs whose imbalance ratio exceeds the threshold (Kafka: strictly greater)."""
    return [i.spu for i in leader_imbalance(state).values() if i.ratio > threshold]


def rebalance_leaders(state: ClusterState,
                      threshold: float = DEFAULT_IMBALANCE_THRESHOLD) -> PreferredElection:
    """One auto-rebalance check: preferred elections for the SPUs over the threshold."""
    if not 0 <= threshold <= 1:
        raise ReplicationError(f"threshold must be between 0 and 1, not {threshold}")
    over = frozenset(imbalanced_spus(state, threshold))
    if not over:
        return PreferredElection((), (), ())
    return elect_preferred_leaders(state, spus=over)
