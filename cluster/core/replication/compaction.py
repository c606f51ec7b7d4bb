"""Log compaction below a log-start offset, so a long-running shell stays bounded.

A compacted offset keeps its place (LEO, HW and every offset stay as they were)
but its record id becomes ``COMPACTED`` on every replica alike, so logs still
compare equal where they agreed and the sync and election rules run unchanged.
Only committed offsets (below the set's HW) are ever compacted: what a consumer
loses is retention, never an uncommitted write. Record ids grow with every
append, so a log is increasing and its compacted prefix is found by bisection.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from .state import ReplicaSet

COMPACTED = -1


def log_start(log: Sequence[int]) -> int:
    """First offset still holding a record id (0 when nothing was compacted)."""
    return bisect_right(log, COMPACTED)


def reference_log(rs: ReplicaSet) -> list[int]:
    """The leader's log, or the longest one while there is no leader."""
    if rs.leader is not None:
        return rs.replica[rs.leader].log
    return max((r.log for r in rs.replica.values()), key=len)


def compact(rs: ReplicaSet, retain: int, *, step: int = 1) -> int:
    """Compact offsets below ``HW - retain`` on every replica; return the log start.

    ``step`` batches the work: nothing happens until the start would move by
    at least that many offsets (each compaction rewrites the compacted prefix).
    """
    if retain < 0 or step < 1:
        raise ValueError("retain must be >= 0 and step >= 1")
    start, target = log_start(reference_log(rs)), rs.hw - retain
    if target - start < step:
        return start
    for r in rs.replica.values():
        n = min(target, len(r.log))
        r.log[:n] = [COMPACTED] * n
    return target
