"""The replica sets this process last committed, decoded, so its next unit of work need
not decode them again.

A busy tick changes every set, and decoding 10,000 of them was a sixth of its CPU.
A kept set is its decoding but for what the encoding leaves out on purpose: a
caught-up follower's clock (set_codec.encode_set), which the kept set holds as the
core left it, so lag time counts from the follower's last caught-up fetch, as the
core alone would count it (a decoded set counts from the next step, a tick later).
Redis stays the truth: a load still fetches every encoding it needs, and takes a set
from here only when the fetched bytes are the very bytes this process committed (so
a set another worker or shard wrote since is decoded as before). Entries are *taken*
(removed) by the load that uses them and put back only once a unit of work has
committed and projected: a step that fails half-way, or a save refused because the
lease was lost, leaves nothing here that the step may have changed.

Readers (pages, consume) never use this: they decode their own copy.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from cluster.core.replication import ReplicaSet
from cluster.core.replication.compaction import reference_replica

if TYPE_CHECKING:
    from cluster.adapters.hot_state import HotState, Summary
    from cluster.adapters.set_records import Stored

# Beyond this many sets (several stores in one test process, say) the cache starts over.
MAX_SETS = 400_000

# (sets key of the topic, which names the store; partition)
#     -> (encoding, set, summary, what its records key holds)
_committed: dict[tuple[str, int], tuple[bytes, ReplicaSet, "Summary", "Stored"]] = {}


class Known(NamedTuple):
    """The records this process last committed of a set another process has written
    since: the run as it stood then, from its log start."""
    start: int
    records: list[int]


def take(set_key: str, partition: int, data: bytes
         ) -> tuple[tuple[ReplicaSet, Summary, Stored] | None, Known | None]:
    """The set committed as ``data`` by this process, if it is that one; else what this
    process last knew of its records, if anything. Either way, removed from here.
    (The encoding names the count and last id of the records kept apart, so equal bytes
    mean the records are the ones committed too.)"""
    kept = _committed.pop((set_key, partition), None)
    if kept is None:
        return None, None
    if kept[0] != data:
        # Another worker ran this set since (a shard task lands on any worker): the load
        # fetches only the records appended after these, not the whole retained run.
        start, count, _ = kept[3]
        return None, Known(start, reference_replica(kept[1]).log) if count else None
    return (kept[1], kept[2], kept[3]), None


def keep(hot: HotState, sets_key_of: dict[str, str]) -> None:
    """After a commit and its projections: remember every set of ``hot`` as committed."""
    if len(_committed) > MAX_SETS:
        _committed.clear()
    raw, before, after, stored = hot.raw, hot.before, hot.after, hot.stored
    for key, rs in hot.state.replica_sets.items():
        data, summary, on_disk = raw.get(key), after.get(key) or before.get(key), stored.get(key)
        if data is not None and summary is not None and on_disk is not None:
            _committed[(sets_key_of[key[0]], key[1])] = (data, rs, summary, on_disk)


def clear() -> None:
    _committed.clear()


