"""Events the shell feeds in, and actions the controllers hand back.

Events are what happened (a request, a report, a timer); actions are what the
shell must persist, log, send or schedule. Both are frozen dataclasses that
serialise to plain dicts (see ``serial.py``) so they can cross Celery.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .state import DEFAULT_MOVE_TIMEOUT_MS, Acks, MovePhase, Resolution

Records = tuple[tuple[int, int], ...]  # (offset, record_id) pairs


# ---- events ---------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ProduceRequest:
    topic: str
    partition: int
    acks: Acks = Acks.LEADER
    count: int = 1


@dataclass(frozen=True, slots=True)
class FollowerFetch:
    """One follower round: report LEO/HW, receive records and HW, report again."""

    topic: str
    partition: int
    spu: int
    max_records: int | None = None
    now_ms: int | None = None


@dataclass(frozen=True, slots=True)
class ReplicationTick:
    """One fetch round for every live follower of every Online replica set."""

    now_ms: int | None = None
    max_records: int | None = None


@dataclass(frozen=True, slots=True)
class SpuOffline:
    spu: int


@dataclass(frozen=True, slots=True)
class SpuOnline:
    spu: int


@dataclass(frozen=True, slots=True)
class PromotionSucceeded:
    topic: str
    partition: int
    spu: int
    attempt: int


@dataclass(frozen=True, slots=True)
class PromotionFailed:
    """Optional explicit failure report; 001's SPU stays silent and the timer fires."""

    topic: str
    partition: int
    spu: int
    attempt: int


@dataclass(frozen=True, slots=True)
class TimerFired:
    topic: str
    partition: int
    candidate: int
    attempt: int


@dataclass(frozen=True, slots=True)
class ReconcileElections:
    """Periodic retry of Offline replica sets that have a live LRS member again."""


@dataclass(frozen=True, slots=True)
class ReassignPartition:
    """Start moving the replica list to ``target`` (Kafka's reassign --execute, one partition).

    ``elect_preferred`` moves leadership to target[0] at the end even when the
    current leader stays; ``timeout_ms`` (None: wait for ever) is how long a new
    replica's SPU may stay offline before the move rolls back.
    """

    topic: str
    partition: int
    target: tuple[int, ...]
    elect_preferred: bool = False
    timeout_ms: int | None = DEFAULT_MOVE_TIMEOUT_MS
    now_ms: int | None = None


@dataclass(frozen=True, slots=True)
class CancelReassignment:
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class ElectPreferredLeaders:
    """Kafka's kafka-leader-election --election-type PREFERRED, for one topic or all."""

    topic: str | None = None


@dataclass(frozen=True, slots=True)
class RebalanceLeaders:
    """Kafka's auto.leader.rebalance check: preferred elections for SPUs over the threshold."""

    threshold: float = 0.10


@dataclass(frozen=True, slots=True)
class ElectUncleanLeader:
    """Operator override: let a live replica outside the LRS lead, giving up records."""

    topic: str
    partition: int
    spu: int | None = None


Event = Union[ProduceRequest, FollowerFetch, ReplicationTick, SpuOffline, SpuOnline,
              PromotionSucceeded, PromotionFailed, TimerFired, ReconcileElections,
              ReassignPartition, CancelReassignment, ElectPreferredLeaders,
              RebalanceLeaders, ElectUncleanLeader]


# ---- actions --------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ProduceAccepted:
    topic: str
    partition: int
    acks: Acks
    base_offset: int
    record_ids: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ProduceRefused:
    topic: str
    partition: int
    code: str
    reason: str


@dataclass(frozen=True, slots=True)
class RecordsAcknowledged:
    topic: str
    partition: int
    acks: Acks
    records: Records
    # acks=all: the LRS that committed them. The same step may shrink the LRS after
    # the commit (a later fetch round judges a follower), so the set's LRS after the
    # step does not tell.
    lrs: tuple[int, ...] = ()
    # acks=1 from a leader the SC deposed (``links``): the SPU that acknowledged them.
    spu: int | None = None


@dataclass(frozen=True, slots=True)
class AckFailed:
    topic: str
    partition: int
    code: str
    reason: str
    records: Records


@dataclass(frozen=True, slots=True)
class ResolutionChanged:
    topic: str
    partition: int
    old: Resolution
    new: Resolution
    reason: str


@dataclass(frozen=True, slots=True)
class LeaderChanged:
    topic: str
    partition: int
    old: int | None
    new: int | None
    epoch: int


@dataclass(frozen=True, slots=True)
class LrsChanged:
    """The leader's (or SC's) new LRS and HW, to be sent to all followers."""

    topic: str
    partition: int
    leader: int | None
    lrs: tuple[int, ...]
    hw: int


@dataclass(frozen=True, slots=True)
class NotifyCandidate:
    """Tell every live SPU of the set who the candidate is (shell -> SPU task)."""

    topic: str
    partition: int
    candidate: int
    attempt: int
    spus: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class StartElectionTimer:
    """Shell: schedule TimerFired(topic, partition, candidate, attempt) after timeout_ms."""

    topic: str
    partition: int
    candidate: int
    attempt: int
    timeout_ms: int


@dataclass(frozen=True, slots=True)
class ReplicaTruncated:
    topic: str
    partition: int
    spu: int
    old_leo: int
    new_leo: int
    reason: str
    # The record ids dropped, at offsets new_leo.. (never silent: the rehearsal reports them).
    records: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class MoveStarted:
    topic: str
    partition: int
    original: tuple[int, ...]
    target: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ReplicasChanged:
    """The partition's replica list is now ``replicas``: the store's replica map follows.

    ``adding`` / ``removing`` name the replicas of a move still in flight
    (Kafka's AddingReplicas / RemovingReplicas); both are empty once it ends.
    """

    topic: str
    partition: int
    replicas: tuple[int, ...]
    adding: tuple[int, ...]
    removing: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class MoveProgressed:
    """A move changed phase or a new replica joined the LRS (see ``reassign.move_progress``)."""

    topic: str
    partition: int
    phase: MovePhase
    caught_up: tuple[int, ...]
    records_copied: int
    records_total: int


@dataclass(frozen=True, slots=True)
class MoveCompleted:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    leader: int | None


@dataclass(frozen=True, slots=True)
class MoveRolledBack:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    reason: str


@dataclass(frozen=True, slots=True)
class UncleanLeaderElected:
    """A replica outside the LRS leads: committed offsets [new_hw, old_hw) are given up."""

    topic: str
    partition: int
    spu: int
    old_hw: int
    new_hw: int
    offsets_lost: int
    forced: bool


Action = Union[ProduceAccepted, ProduceRefused, RecordsAcknowledged, AckFailed,
               ResolutionChanged, LeaderChanged, LrsChanged, NotifyCandidate,
               StartElectionTimer, ReplicaTruncated, MoveStarted, ReplicasChanged,
               MoveProgressed, MoveCompleted, MoveRolledBack, UncleanLeaderElected]

# Error codes carried by ProduceRefused / AckFailed.
UNKNOWN_TOPIC_OR_PARTITION = "UNKNOWN_TOPIC_OR_PARTITION"
NOT_LEADER = "NOT_LEADER"
NOT_ENOUGH_REPLICAS = "NOT_ENOUGH_REPLICAS"
NOT_ENOUGH_REPLICAS_AFTER_APPEND = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
LEADER_LOST = "LEADER_LOST"
INVALID_REQUEST = "INVALID_REQUEST"
# Kafka's NetworkException: the producer cannot reach the leader (a cut, ``links``).
NETWORK_EXCEPTION = "NETWORK_EXCEPTION"
