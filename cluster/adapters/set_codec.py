"""The hot state's encodings: a replica set in msgpack, a move in flight, and the summary
the store mirrors of a set (split from hot_state.py; hot_state re-exports these names).

A set is stored as a format version, then its fields. Logs are stored once:
every replica whose log is a prefix of the leader's is stored as its length,
and compacted offsets as a count (``core.replication.compaction``), the same
count the core keeps as the replica's log start. Optional fields live in a
trailing dict, kept only when not default (``OPTIONAL_SET_FIELDS``), so a field
added to the core later needs one entry there, not a new format.

Format 3 may keep the reference log's records apart (``encode_status``): the
encoding then holds their count and last id (extras ``recs``), and the records
are an append-only run of int64 ids beside it (hot_state.records_key). A busy
tick then writes each set's status and the ids it appended, never again the
retained log: at the default retention that log is 10,000 ids a partition, and
rewriting it every tick cost seconds and gigabytes of writes at 10,000
partitions. ``encode_set`` still writes the whole set in one value (tests,
tools). A format-2 reader would take a format-3 status for a set with an empty
log, hence the new version.

The records apart end at a block boundary (``apart_count``): the ids after it, fewer than
``RECORDS_BLOCK``, are the status's own ``tail``, and the log is the records apart then that
tail. A set gaining a record a tick then appends to its records key once in eight ticks,
not at every tick: the append was half of Redis's work of a busy tick (a key looked up and
a command written to the append-only file a set), where the status, written anyway, grows
by the few ids. A status of before, whose tail is empty and whose count is its whole log,
reads the same; its next save rewrites its records key to the block.
"""
from __future__ import annotations

import threading
from array import array
from collections.abc import Callable
from operator import attrgetter
from typing import Any, NamedTuple

import msgpack

from cluster.core.replication import (MovePhase, Reassignment, Replica, ReplicaSet,
                                      Resolution)
from cluster.core.replication.compaction import reference_replica
from cluster.core.replication.steady import Steady
from cluster.errors import Unavailable

_RESOLUTIONS = {r.value: r for r in Resolution}
# The set encoding's version; a later one may add fields, an older one still decodes.
SET_FORMAT = 3
# The extras key of a status whose records are kept apart: [count, last id or None].
RECORDS_APART = "recs"
# The records apart end where a partition's block of offsets ends (``apart_count``). Only
# writers use it: a reader takes the count from the status, so statuses written with
# another block (or before blocks) read the same.
RECORDS_BLOCK = 8


# (spu, leo, hw) of one replica. A plain tuple, always unpacked by name: as a
# NamedTuple its 30,000 constructions a tick doubled the cost of summary().
ReplicaStatus = tuple[int, int, int]


class Summary(NamedTuple):
    """What the store mirrors of a replica set (its partition row's status columns)."""
    leader: int | None
    lrs: tuple[int, ...]
    resolution: Resolution
    hw: int
    leo: int | None  # the leader's LEO; None without a leader
    replicas: tuple[ReplicaStatus, ...]
    epoch: int = 0

    def status(self) -> tuple[int | None, tuple[int, ...], Resolution]:
        """The part whose change is an event: leader, LRS, resolution."""
        return self.leader, self.lrs, self.resolution

    def log_status(self) -> tuple[tuple[int, ...], int | None, tuple[int, ...], Resolution, int]:
        """The part the metadata log records (core.replication.metadata.Status)."""
        return (tuple([s for s, _, _ in self.replicas]), self.leader, self.lrs,
                self.resolution, self.epoch)

    def stored_leo(self) -> int:
        # Without a leader the row keeps the longest replica's LEO.
        return self.leo if self.leo is not None else max(leo for _, leo, _ in self.replicas)




def _replica_in(spu: int, enc: Any, ref_start: int, ref_tail: list[int]) -> Replica:
    """The replica a stored log stands for; only its retained records are built."""
    if not isinstance(enc, int):
        start, tail = enc
        return Replica(spu, tail, start=start)
    if enc <= ref_start:
        return Replica(spu, [], start=enc)
    return Replica(spu, ref_tail[:enc - ref_start], start=ref_start)


def encode_set(rs: ReplicaSet) -> bytes:
    """The whole set in one value, its reference log's records included."""
    ref = reference_replica(rs)
    return _encode(rs, ref, ref.log, _extras(rs))[0]


def encode_status(rs: ReplicaSet, ref: Replica, *, steady: bool = False,
                  lrs_clock: int | None = None) -> tuple[bytes, Summary]:
    """The set but its reference log's records (``ref``: reference_replica(rs)) up to a
    block boundary, which are kept apart: the encoding names their count and last id, and
    holds the ids after them, so any change to the log (an append, a cut, another
    reference) changes the status too. With it, the set's summary (``summary``), read in
    the same pass over its replicas. ``lrs_clock``, ``steady``: as ``_encode``'s."""
    extras = _extras(rs)
    log = ref.log
    count = apart_count(rs.partition, ref.start, len(log))
    extras[RECORDS_APART] = [count, log[count - 1] if count else None]
    return _encode(rs, ref, log[count:], extras, steady, lrs_clock)


def apart_count(partition: int, start: int, size: int) -> int:
    """How many of a reference log's ``size`` retained ids (from offset ``start``) are kept
    apart: those below the last block boundary at or before its LEO. The boundaries of a
    partition are shifted by its number, so the sets of a topic that all gain a record a
    tick append to their records keys in turn, an eighth of them a tick, not all at once."""
    leo = start + size
    end = leo - (leo + partition) % RECORDS_BLOCK
    return end - start if end > start else 0


def records_bytes(ids: list[int]) -> bytes:
    """Record ids as stored apart: native int64s, appended as they come."""
    return array("q", ids).tobytes()


def records_from(data: bytes | None) -> list[int]:
    return array("q", data or b"").tolist()


def _prefix(log: list[int], start: int, n: int, ref_start: int, ref_log: list[int],
            leo: int) -> bool:
    """Whether a replica's log (``log`` from ``start``, LEO ``n``) is a prefix of the
    reference's (``ref_log`` from ``ref_start``, LEO ``leo``): wholly compacted up to its
    LEO, or the same record at the same offset. Record ids are unique and a follower
    appends only after its last record matched the leader's (sync._pull), the rule the
    core's own fetch relies on; comparing the whole retained log instead cost 0.1 ms a
    follower at the default retention."""
    return (n <= ref_start and start == n) or (
        ref_start < n <= leo and start == ref_start and log[-1] == ref_log[n - ref_start - 1])


def replica_state(r: Replica, ref: Replica, clock: int | None
                  ) -> tuple[Any, int, bool, int, int | None]:
    """What a set's encoding stores of replica ``r`` (``ref``: the set's reference
    replica; ``clock``: its caught-up clock as stored), as ``encode_status`` packs it."""
    ref_start, ref_log = ref.start, ref.log
    leo = ref_start + len(ref_log)
    log, start = r.log, r.start
    n = start + len(log)
    out = n if r is ref or _prefix(log, start, n, ref_start, ref_log, leo) else [start, log]
    return out, r.hw, r.claims_leadership, r.seen_attempt, clock if n < leo else None


def _encode(rs: ReplicaSet, ref: Replica, tail: list[int], extras: dict[str, Any],
            steady: bool = False, lrs_clock: int | None = None) -> tuple[bytes, Summary]:
    """The encoding and the summary, from one pass over the replicas: a busy tick encodes
    every set, and a second pass for its summary cost a third as much again.
    ``steady``: the set is in the steady index, so its LRS followers are not kept
    (core.replication.steady.LAZY): each holds the reference's (the leader's) log up to
    the set's HW, with that HW, and stores ``lrs_clock``, the index's caught-up clock (the
    index does not write theirs while the set stays in; None: their own)."""
    ref_start, ref_log, rep = ref.start, ref.log, rs.replica
    leo = ref_start + len(ref_log)
    replicas: list[tuple[Any, int, bool, int, int | None]] = []
    figures = []
    lrs_followers = [s for s in rs.lrs if s != rs.leader] if steady else ()
    for s in rs.replicas:
        r = rep[s]
        if s in lrs_followers:
            n = rs.hw
            replicas.append((n, n, r.claims_leadership, r.seen_attempt,
                             (r.caught_up_ms if lrs_clock is None else lrs_clock)
                             if n < leo else None))
            figures.append((s, n, n))
            continue
        log, start = r.log, r.start
        n = start + len(log)
        # A replica's log is stored as its LEO when it is a prefix of the reference's
        # (``_prefix``).
        out = n if r is ref or _prefix(log, start, n, ref_start, ref_log, leo) else [start, log]
        # A caught-up follower's clock is reset at every fetch: storing it would make
        # every set "changed" at every tick. Lag time then counts from the first
        # step that sees it behind (at most one tick later than the core would).
        replicas.append((out, r.hw, r.claims_leadership, r.seen_attempt,
                         r.caught_up_ms if n < leo else None))
        figures.append((s, n, r.hw))
    leader = rs.leader
    # Resolution is a str enum: msgpack packs it as its value, byte for byte.
    data = _packer().pack((SET_FORMAT, rs.topic, rs.partition, rs.replicas, leader, rs.lrs,
                           rs.resolution, rs.hw, rs.epoch, rs.candidate, rs.attempt,
                           rs.tried, rs.pending, ref_start, tail, replicas, extras))
    if leader is None:
        leader_leo = None
    else:
        lead = rep[leader]
        leader_leo = leo if lead is ref else lead.start + len(lead.log)
    return data, _new_summary(Summary, (leader, tuple(rs.lrs), rs.resolution, rs.hw,
                                        leader_leo, tuple(figures), rs.epoch))


_local = threading.local()


def _packer() -> msgpack.Packer:
    """One packer per thread, reused: packb builds a packer and its buffer at every call,
    half the cost of packing a set (a unit of work packs every set it loaded)."""
    packer = getattr(_local, "packer", None)
    if packer is None:
        packer = _local.packer = msgpack.Packer()
    return packer


def _extras(rs: ReplicaSet) -> dict[str, Any]:
    values = _optional_values(rs)
    if values == _ALL_DEFAULT:  # nearly every set, every tick: one comparison
        return {}
    return {name: encode(value) for (name, encode, default), value
            in zip(_OPTIONAL_DEFAULTS, values) if value != default}


def _default(f: Any) -> Any:
    return f.default_factory() if callable(f.default_factory) else f.default


def status_fields(data: bytes) -> list[Any]:
    """A stored status unpacked once (any format): read ``start_and_apart`` from it, decode it."""
    fields = msgpack.unpackb(data)
    # Format 1 had no version and no extras: it starts with the topic name.
    return [1, *fields, {}] if isinstance(fields[0], str) else fields


def _apart(extras: dict[str, Any]) -> tuple[int, int | None] | None:
    recs = extras.get(RECORDS_APART)
    return None if recs is None else (recs[0], recs[1])


def decode_set(data: bytes, records: list[int] | None = None) -> ReplicaSet:
    """``records``: the ids kept apart, for a status written by ``encode_status``."""
    return decode_fields(status_fields(data), records)[0]


def start_and_apart(fields: list[Any]) -> tuple[int, tuple[int, int | None] | None]:
    """The reference log's start, and (count, last id) of its records kept apart."""
    return fields[13], _apart(fields[16])


def decode_fields(fields: list[Any], records: list[int] | None
                  ) -> tuple[ReplicaSet, tuple[int, int | None] | None]:
    (_, topic, partition, replicas, leader, lrs, resolution, hw, epoch, candidate, attempt,
     tried, pending, start, tail, states, extras) = fields[:17]
    apart = _apart(extras)
    if apart is not None:  # the records apart, then the status's own tail
        tail = checked_records(topic, partition, apart, records, tail)
    replica = {}
    for s, (log, rhw, claims, seen, caught) in zip(replicas, states):
        r = replica[s] = _replica_in(s, log, start, tail)
        r.hw, r.claims_leadership, r.seen_attempt, r.caught_up_ms = rhw, claims, seen, caught
    return ReplicaSet(topic, partition, replicas, replica, leader, lrs,
                      _RESOLUTIONS[resolution], hw, epoch, candidate, attempt, tried,
                      [(o, i) for o, i in pending],
                      **{k: OPTIONAL_SET_FIELDS[k][1](v) for k, v in extras.items()
                         if k in OPTIONAL_SET_FIELDS}), apart


def checked_records(topic: str, partition: int, recs: tuple[int, int | None],
                    records: list[int] | None, tail: list[int]) -> list[int]:
    """The retained log of a status that keeps ``recs`` (count, last id) of it apart, as
    ``records``, then its own ``tail``; refused when the records disagree."""
    count, last = recs
    # Status and records land in one transaction: anything else is damage, not a race.
    if records is None or len(records) < count or (count and records[count - 1] != last):
        raise RecordsMismatch([(topic, partition,
                                f"status: {count} ending id {last}, found {len(records or [])}")])
    if len(records) > count:
        records = records[:count]
    return records + tail if tail else records


class RecordsMismatch(Unavailable, ValueError):
    """Sets whose records key disagrees with their status (two Redis servers wrote one
    append-only file, say): refused, never read as some other log. ``partitions``: (topic,
    partition, what disagrees) of every such set one load met; ``store repair`` lists and
    rebuilds them (cluster/services/repair.py)."""

    def __init__(self, partitions: list[tuple[str, int, str]]):
        self.partitions = sorted(partitions)
        # The first few in words: the tick's error is one line (/readyz keeps 500 chars).
        named = ", ".join(f"{t}/{p} ({why})" for t, p, why in self.partitions[:5])
        if len(self.partitions) > 5:
            named += f" and {len(self.partitions) - 5} more"
        super().__init__(f"hot state refused: records and status disagree in "
                         f"{len(partitions)} partition(s): {named}; `manage.py store repair` "
                         f"lists them, `store repair --yes` rebuilds them from the store",
                         details={"partitions": [f"{t}/{p}" for t, p, _ in self.partitions],
                                  "repair": "manage.py store repair"})


class LeaderLog(NamedTuple):
    """The leader's side of one replica set, without building its compacted prefix."""
    leader: int | None
    resolution: Resolution
    hw: int
    leo: int
    log_start: int
    tail: list[int]

    def records(self, offset: int, end: int) -> list[int]:
        """Record ids at offsets [offset, end), compacted ones left out: cost follows end - offset."""
        first = max(offset, self.log_start)
        return self.tail[first - self.log_start:end - self.log_start] if first < end else []


def encode_move(move: Reassignment | None) -> tuple[Any, ...] | None:
    """A move in flight as the set encoding's optional ``move`` field (None: no move)."""
    if move is None:
        return None
    return (move.original, move.target, move.elect_preferred, move.timeout_ms,
            move.started_ms, move.stalled_ms, move.rolling_back, move.reason,
            move.phase.value, move.caught_up)


def decode_move(enc: Any) -> Reassignment | None:
    # Values written before moves existed have no move field: no move in flight.
    if enc is None:
        return None
    (original, target, elect_preferred, timeout_ms, started_ms, stalled_ms, rolling_back,
     reason, phase, caught_up) = enc
    return Reassignment(list(original), list(target), elect_preferred, timeout_ms, started_ms,
                        stalled_ms, rolling_back, reason, MovePhase(phase), list(caught_up))


def _same(value: Any) -> Any:
    return value


OPTIONAL_SET_FIELDS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "move": (encode_move, decode_move),
    "deadline_ms": (_same, _same),
    # msgpack keys must be strings or a list: a deposed leader as [spu, epoch] pairs.
    "deposed": (lambda d: sorted(d.items()), lambda pairs: {int(s): int(e) for s, e in pairs}),
    "unaware": (lambda d: sorted(d.items()), lambda pairs: {int(s): int(e) for s, e in pairs}),
}


# (name, encode, default) of each optional field, read once: every encoding checks them.
_OPTIONAL_DEFAULTS = [(name, encode, _default(ReplicaSet.__dataclass_fields__[name]))
                      for name, (encode, _) in OPTIONAL_SET_FIELDS.items()]

# attrgetter of several names answers a tuple (of one name, the bare value).
_optional_values = attrgetter(*(name for name, _, _ in _OPTIONAL_DEFAULTS), "__class__")
_ALL_DEFAULT = (*(default for _, _, default in _OPTIONAL_DEFAULTS), ReplicaSet)

_new_summary = tuple.__new__


def view_summary(steady: Steady, rs: ReplicaSet) -> Summary:
    """``summary(steady.view(rs))``, without the view's copy of a steady set."""
    seen = steady.view_offsets(rs)
    if seen is None:
        return summary(rs)
    hw, replicas = seen
    leader = rs.leader
    return _new_summary(Summary, (leader, tuple(rs.lrs), rs.resolution, hw,
                                  rs.replica[leader].leo,  # type: ignore[index]
                                  replicas, rs.epoch))


def summary(rs: ReplicaSet) -> Summary:
    """Runs twice per set and step: one comprehension, no properties."""
    rep = rs.replica
    leader = rs.leader
    # tuple.__new__ skips the NamedTuple's Python-level __new__: a quarter of this function.
    return _new_summary(Summary, (leader, tuple(rs.lrs), rs.resolution, rs.hw,
                                  None if leader is None else rep[leader].leo,
                                  tuple([(s, rep[s].leo, rep[s].hw) for s in rs.replicas]),
                                  rs.epoch))

