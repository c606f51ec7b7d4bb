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

__all__ = ["COMPACTED", "compact", "compact_at", "compaction_cut", "reference_replica",
           "retention_for"]

# The per-partition retentions a budget may choose (``retention_for``): 1, 2 and 5 times
# a power of ten, so adding a topic changes the retention only when it crosses one.
_ROUND = (1, 2, 5)


def retention_for(partitions: int, most: int, budget: int) -> int:
    """Records a partition keeps below HW when ``partitions`` share a ``budget`` of
    retained record ids: ``most`` (the configured retention; 0 keeps every record) while
    the budget allows it, else the largest 1-2-5 figure within the partition's share
    (at least 1). A budget of 0 sets no bound.

    The retained ids are what the engine holds in memory (a Python int and a pointer per
    replica each, ~57 bytes at replication 3; ~41 while the set is steady, its followers'
    copies not kept): at the default retention of 10,000 a worker of 100,000 busy
    partitions would need 41-57 GB, so the budget, not the operator, bounds what a large
    cluster retains."""
    if most <= 0 or budget <= 0 or partitions <= 0:
        return most
    share = max(1, budget // partitions)
    if share >= most:
        return most
    power = 10 ** (len(str(share)) - 1)  # the largest power of ten within the share
    return max(f * power for f in _ROUND if f * power <= share)


def reference_replica(rs: ReplicaSet) -> Replica:
    """The leader, or while there is none the LRS member with the longest log: LRS
    members hold the committed log (an old leader's tail or a deposed leader's is
    not the set's: it is cut when it rejoins)."""
    if rs.leader is not None:
        return rs.replica[rs.leader]
    pool = [rs.replica[s] for s in rs.lrs if s in rs.replica] or list(rs.replica.values())
    return max(pool, key=lambda r: r.leo)


def compaction_cut(rs: ReplicaSet, start: int, retain: int, step: int) -> int | None:
    """Where compaction moves a log start of ``start`` (the reference replica's), or None
    while it would not move by ``step`` offsets yet.

    The cut is the highest offset at most ``HW - retain`` on the partition's own phase of
    the step (its number modulo ``step``): partitions produced to in step (a producer's
    round robin) reach their cuts at ``step`` different ticks, not all at one. Each cut
    costs the shell a trim of the set's records key and a new template for its encoding
    (adapters); when every records key was rewritten whole at each cut, 100,000
    partitions cutting at one tick wrote all their retained ids to Redis at once. Once on
    its phase a replica keeps between ``retain``
    and ``retain + step - 1`` records below HW, as with cuts at ``HW - retain``; before
    its first cut, up to a step more."""
    target = rs.hw - retain
    if target - start < step:
        return None
    cut = target - (target - rs.partition) % step
    # A start not on the phase yet (a new set's 0) waits for a whole step too: otherwise
    # every set's first cut would come at one tick.
    return cut if cut - start >= step else None


def compact(rs: ReplicaSet, retain: int, *, step: int = 1) -> int:
    """Compact offsets below the cut (``compaction_cut``: ``HW - retain``, on the
    partition's phase of ``step``) on every replica; return the log start.

    ``step`` batches the work: nothing happens until the start would move by
    at least that many offsets.
    """
    if retain < 0 or step < 1:
        raise ValueError("retain must be >= 0 and step >= 1")
    ref = reference_replica(rs)
    target = compaction_cut(rs, ref.start, retain, step)
    if target is None:
        return ref.start
    compact_at(rs, ref, target)
    return target


def compact_at(rs: ReplicaSet, ref: Replica, target: int) -> None:
    """Move every replica that agrees with ``ref`` (the set's reference replica) up to a
    log start of ``target`` (a cut ``compaction_cut`` gave)."""
    # Decided before any replica moves: the reference itself is compacted in the loop.
    agreeing = [r for r in rs.replica.values() if _agrees(r, ref, target)]
    for r in agreeing:
        r.compact_to(target)


def _agrees(r: Replica, ref: Replica, target: int) -> bool:
    """The replica holds the reference's record where its compaction would end.

    One that does not (a deposed leader, an old leader's uncommitted tail) keeps
    its log: its rejoin cuts those records and reports them, never silently.
    It receives nothing while it diverges, so what it keeps does not grow.
    """
    end = min(target, r.leo)
    if end <= r.start:
        return True
    return ref.start <= end - 1 < ref.leo and r.at(end - 1) == ref.at(end - 1)
