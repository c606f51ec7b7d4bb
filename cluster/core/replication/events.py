"""Events the shell feeds in, and actions the controllers hand back.

Events are what happened (a request, a report, a timer); actions are what the
shell must persist, log, send or schedule. Both are frozen dataclasses that
serialise to plain dicts (see ``serial.py``) so they can cross Celery.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .state import Acks, Resolution

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


Event = Union[ProduceRequest, FollowerFetch, ReplicationTick, SpuOffline, SpuOnline,
              PromotionSucceeded, PromotionFailed, TimerFired, ReconcileElections]


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


Action = Union[ProduceAccepted, ProduceRefused, RecordsAcknowledged, AckFailed,
               ResolutionChanged, LeaderChanged, LrsChanged, NotifyCandidate,
               StartElectionTimer, ReplicaTruncated]

# Error codes carried by ProduceRefused / AckFailed.
UNKNOWN_TOPIC_OR_PARTITION = "UNKNOWN_TOPIC_OR_PARTITION"
NOT_LEADER = "NOT_LEADER"
NOT_ENOUGH_REPLICAS = "NOT_ENOUGH_REPLICAS"
NOT_ENOUGH_REPLICAS_AFTER_APPEND = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
LEADER_LOST = "LEADER_LOST"
INVALID_REQUEST = "INVALID_REQUEST"
