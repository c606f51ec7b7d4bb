"""Pending acks=all records: acknowledged once committed, failed otherwise."""
from __future__ import annotations

from .events import (NOT_ENOUGH_REPLICAS_AFTER_APPEND, AckFailed, Action,
                     RecordsAcknowledged)
from .state import Acks, ReplicaSet


def settle_acks(rs: ReplicaSet, min_lrs: int) -> list[Action]:
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
