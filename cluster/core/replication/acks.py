"""Pending acks=all records: acknowledged once committed, failed otherwise."""
from __future__ import annotations

from enum import Enum

from .events import (NOT_ENOUGH_REPLICAS_AFTER_APPEND, AckFailed, Action,
                     RecordsAcknowledged)
from .state import Acks, ReplicaSet


def acknowledge_committed(rs: ReplicaSet, min_lrs: int) -> list[Action]:
    """Resolve every pending record the HW has now passed."""
    pending, hw = rs.pending, rs.hw
    n = 0
    while n < len(pending) and pending[n][0] < hw:
        n += 1
    if n == 0:
        return []
    done = tuple(pending[:n])
    del pending[:n]
    if len(rs.lrs) >= min_lrs:
        return [RecordsAcknowledged(rs.topic, rs.partition, Acks.ALL, done, tuple(rs.lrs))]
    # Kafka's NotEnoughReplicasAfterAppend: committed, but by fewer replicas than promised.
    reason = (f"committed while the LRS had {len(rs.lrs)} replicas, "
              f"below the topic's min_lrs {min_lrs}")
    return [AckFailed(rs.topic, rs.partition, NOT_ENOUGH_REPLICAS_AFTER_APPEND, reason, done)]


def fail_pending(rs: ReplicaSet, code: str, reason: str) -> list[Action]:
    if not rs.pending:
        return []
    done = tuple(rs.pending)
    rs.pending.clear()
    return [AckFailed(rs.topic, rs.partition, code, reason, done)]


class AckOutcome(str, Enum):
    """What a producer is told about its write; decided here only (``ack_outcome``)."""
    APPENDED = "appended"          # acks=0: the leader appended, nothing more promised
    ACKNOWLEDGED = "acknowledged"  # acks=1: the leader has it; acks=all: the whole LRS has it
    PENDING = "pending"            # acks=all, not yet replicated by the whole LRS
    FAILED = "failed"              # acks=all: the core failed it (leader lost, LRS too small)


def outcome_on_append(acks: Acks) -> AckOutcome:
    return {Acks.NONE: AckOutcome.APPENDED, Acks.LEADER: AckOutcome.ACKNOWLEDGED}.get(
        acks, AckOutcome.PENDING)


def ack_outcome(current: AckOutcome, *, count: int, acked: int, failed: bool,
                committed: bool) -> AckOutcome:
    """A pending acks=all write after what the core reported: failed if any record failed,
    acknowledged once every record is acknowledged or below the HW, else still pending.
    A settled outcome never changes."""
    if current is not AckOutcome.PENDING:
        return current
    if failed:
        return AckOutcome.FAILED
    if acked >= count or committed:
        return AckOutcome.ACKNOWLEDGED
    return AckOutcome.PENDING
