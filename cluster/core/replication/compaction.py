"""Log compaction below a log-start offset, so a long-running shell stays bounded.

A compacted offset keeps its place (LEO, HW and every offset stay as they were)
but its record is forgotten on every replica alike: each replica's log start
(``Replica.start``) moves up and its list keeps only the records from there on,
so memory and the cost of every rule follow the retained records, not every
record ever written. Offsets below the start read as ``COMPACTED``, which
compares equal between replicas, so the sync and election rules run unchanged.
Only committed offsets (below the set's HW) are ever compacted: what a consumer
loses is retention, never an uncommitted write.
"""
from __future__ import annotations

from .state import COMPACTED, Replica, ReplicaSet

__all__ = ["COMPACTED", "compact", "reference_replica"]


def reference_replica(rs: ReplicaSet) -> Replica:
    """The leader, or the replica with the longest log while there is no leader."""
    if rs.leader is not None:
        return rs.replica[rs.leader]
    return max(rs.replica.values(), key=lambda r: r.leo)


def compact(rs: ReplicaSet, retain: int, *, step: int = 1) -> int:
    """Compact offsets below ``HW - retain`` on every replica; return the log start.

    ``step`` batches the work: nothing happens until the start would move by
    at least that many offsets.
    """
    if retain < 0 or step < 1:
        raise ValueError("retain must be >= 0 and step >= 1")
    start, target = reference_replica(rs).start, rs.hw - retain
    if target - start < step:
        return start
    for r in rs.replica.values():
        r.compact_to(target)
    return target
