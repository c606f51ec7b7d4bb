"""Producers and consumers on top of replication (004's semantics).

acks=0 and acks=1 are acknowledged at append (acks=0 gets no acknowledgement
action at all); acks=all is refused up front when the LRS is smaller than the
topic's min_lrs (nothing appended), otherwise held as pending until the HW
passes it. Consumers read from the leader: COMMITTED (offsets < HW) by
default, UNCOMMITTED (up to the leader's LEO) when asked.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import chain, compress, repeat
from operator import and_, not_

from .events import (INVALID_REQUEST, NOT_ENOUGH_REPLICAS, NOT_LEADER,
                     UNKNOWN_TOPIC_OR_PARTITION, Action, ProduceAccepted,
                     ProduceRefused, ProduceRequest, RecordsAcknowledged)
from .state import (Acks, ClusterState, Isolation, Key, NoLeader, ReplicaSet,
                    Resolution)
from . import partitions_net
from .sync import leader_update


@dataclass(frozen=True, slots=True)
class ProduceResult:
    accepted: bool
    code: str | None = None
    reason: str | None = None
    base_offset: int | None = None
    record_ids: tuple[int, ...] = ()
    actions: tuple[Action, ...] = ()


@dataclass(frozen=True, slots=True)
class ConsumeResult:
    start_offset: int
    records: tuple[int, ...]
    hw: int
    leo: int

    @property
    def next_offset(self) -> int:
        return self.start_offset + len(self.records)


def _refuse(topic: str, partition: int, code: str, reason: str) -> ProduceResult:
    action = ProduceRefused(topic, partition, code, reason)
    return ProduceResult(False, code, reason, actions=(action,))


def _refusal(state: ClusterState, req: ProduceRequest, acks: Acks) -> ProduceResult | None:
    rs = state.replica_sets.get((req.topic, req.partition))
    refused = _refused(state, rs, req.topic, req.partition, req.count, acks)
    return None if refused is None else _refuse(req.topic, req.partition, *refused)


def _refused(state: ClusterState, rs: ReplicaSet | None, topic: str, partition: int,
             count: int, acks: Acks) -> tuple[str, str] | None:
    """Why a write of ``count`` records to ``rs`` is refused (code, reason), or None."""
    if rs is None:
        return UNKNOWN_TOPIC_OR_PARTITION, f"unknown partition {topic}/{partition}"
    if count < 1:
        return INVALID_REQUEST, "count must be at least 1"
    if rs.resolution is not Resolution.ONLINE:
        return NOT_LEADER, f"replica set is {rs.resolution.value}: no leader to write to"
    if acks is Acks.ALL:
        min_lrs = state.topics[rs.topic].min_lrs
        if len(rs.lrs) < min_lrs:
            return (NOT_ENOUGH_REPLICAS,
                    f"acks=all needs {min_lrs} live LRS replicas, the LRS has {len(rs.lrs)}")
    return None


def produce(state: ClusterState, req: ProduceRequest) -> ProduceResult:
    """Append req.count records on the leader; refuse with a reason when not allowed."""
    acks = Acks.parse(req.acks)
    if state.cuts or state.expired:
        cut = partitions_net.routed(state, req, acks)
        if cut is not None:
            return ProduceResult(*cut)
    refused = _refusal(state, req, acks)
    if refused is not None:
        return refused
    rs = state.replica_sets[(req.topic, req.partition)]
    base, first = rs.leo, state.next_record_id
    ids = tuple(range(first, first + req.count))
    actions = [ProduceAccepted(rs.topic, rs.partition, acks, base, ids),
               *_append(state, rs, acks, req.count)]
    return ProduceResult(True, base_offset=base, record_ids=ids, actions=tuple(actions))


def consume(state: ClusterState, topic: str, partition: int, offset: int = 0, *,
            isolation: Isolation = Isolation.COMMITTED,
            max_records: int | None = None) -> ConsumeResult:
    """Read from the leader; COMMITTED stops at HW so nothing read can be lost later."""
    rs = state.replica_set(topic, partition)
    leader = _leader_replica(rs)
    end = readable_end(rs.hw, leader.leo, offset, isolation, max_records)
    return ConsumeResult(offset, tuple(leader.records(offset, end)), rs.hw, leader.leo)


def readable_end(hw: int, leo: int, offset: int, isolation: Isolation = Isolation.COMMITTED,
                 max_records: int | None = None) -> int:
    """Where a read from ``offset`` stops: HW for COMMITTED, the leader's LEO otherwise."""
    if offset < 0:
        raise ValueError("offset must be >= 0")
    end = hw if Isolation(isolation) is Isolation.COMMITTED else leo
    return end if max_records is None else min(end, offset + max_records)


def _leader_replica(rs: ReplicaSet):
    if rs.resolution is not Resolution.ONLINE or rs.leader is None:
        raise NoLeader(f"{rs.topic}/{rs.partition} is {rs.resolution.value}: no leader")
    return rs.replica[rs.leader]


def produce_many(state: ClusterState, counts: Iterable[tuple[Key, int]],
                 acks: Acks | int | str) -> tuple[list[Action], dict[str | None, int]]:
    """``produce`` to many partitions at once (a producer writing everywhere every step):
    the same rules, one call per partition, without a result per partition.

    Returns the actions and the records by outcome (None for accepted, else the refusal's
    code). Nobody waits for these offsets: no ``ProduceAccepted``, and acks=1 records are
    acknowledged by their outcome count alone (``RecordsAcknowledged`` per partition was
    most of a busy tick's actions, and nothing read them).
    """
    pairs = list(counts)
    return produce_spread(state, [k for k, _ in pairs], [n for _, n in pairs], acks)


def produce_spread(state: ClusterState, keys: Sequence[Key], counts: Sequence[int],
                   acks: Acks | int | str, *, lost: AbstractSet[int] | None = None
                   ) -> tuple[list[Action], dict[str | None, int]]:
    """``produce_many`` of ``counts[i]`` records to ``keys[i]``, the two aligned (a
    topic's partitions and their shares: no pair built per partition).

    With ``lost`` (the simulated producers: the SPUs whose loop is stopped), a write to a
    missing set, of no record, or to a leader in ``lost`` is passed over, neither
    appended nor refused: a dead producer's records are lost, not answered.

    The steady sets among the keys (``steady``) take their append in runs
    (``_append_steady``); any other key, in its place in the order, takes the full rules:
    record ids are handed out in the keys' order either way.
    """
    level = Acks.parse(acks)
    actions: list[Action] = []
    outcomes: dict[str | None, int] = {}
    if lost is not None and keys and min(counts) < 1:
        # Writes of no record are passed over: out of the way of the runs, in C.
        keys = list(compress(keys, map((0).__lt__, counts)))
        counts = [n for n in counts if n > 0]
    index = state.steady
    steady = index.keys
    accepted = 0
    slow: Iterable[int]
    if level is Acks.ALL or not steady or not keys:
        slow = range(len(keys))
    elif min(counts) > 0 and (not index.unsteady_keys(state.replica_sets)
                              or all(map(steady.__contains__, keys))):
        # Every key (a busy tick's producers): one run. When every loaded set is steady,
        # a key is steady if its set is loaded, which the run checks (no probe of the
        # index per key: the sets are far apart in memory, each probe a cache miss).
        slow = ()
    else:
        # An acks=0/1 append of at least one record to a steady set: the runs' case.
        bulk = map(and_, map(steady.__contains__, keys), map((0).__lt__, counts))
        slow = list(compress(range(len(keys)), map(not_, bulk)))
    lo = 0
    for i in chain(slow, (len(keys),)):
        if i > lo:
            accepted += _append_steady(state, keys[lo:i], counts[lo:i], lost, actions,
                                       outcomes)
        if i < len(keys):
            accepted += _produce_one(state, keys[i], counts[i], level, lost, actions, outcomes)
        lo = i + 1
    if accepted:
        outcomes[None] = outcomes.get(None, 0) + accepted
    return actions, outcomes


def _produce_one(state: ClusterState, key: Key, n: int, level: Acks,
                 lost: AbstractSet[int] | None, actions: list[Action],
                 outcomes: dict[str | None, int]) -> int:
    """One write of ``produce_spread`` under the full rules: the records accepted (the
    refusal, if any, counted in ``outcomes`` and told in ``actions``)."""
    rs = state.replica_sets.get(key)
    if lost is not None and (rs is None or n < 1 or rs.leader in lost):
        return 0
    refused = _refused(state, rs, key[0], key[1], n, level)
    if refused is not None:
        actions.append(ProduceRefused(key[0], key[1], *refused))
        outcomes[refused[0]] = outcomes.get(refused[0], 0) + n
        return 0
    actions += _append(state, rs, level, n, acknowledge=False)  # type: ignore[arg-type]
    return n


def _append_steady(state: ClusterState, keys: Sequence[Key], counts: Sequence[int],
                   lost: AbstractSet[int] | None, actions: list[Action],
                   outcomes: dict[str | None, int]) -> int:
    """``_append``'s effect on steady sets (every key in the index, every count >= 1),
    spelled out: the leader's log grows by the next record ids in the keys' order and
    nothing else moves (the refusal checks pass: Online, a leader; ``leader_update``
    moves nothing but a sole replica's HW, as no follower has fetched). The sets stay in
    the index, marked ``appended``. Returns the records appended. A key whose set is
    gone (dropped behind the index) or whose leader is ``lost`` is passed over as
    ``_produce_one`` passes it over or refuses it."""
    first = nid = state.next_record_id
    skip = lost or frozenset()
    missed: list[Key] = []
    index = state.steady
    marked = dict.fromkeys(keys)
    # The sets appended to since the last round keep their HW (their followers trail);
    # every other steady set's HW is its leader's LEO (a round levelled it, ``levelled``),
    # written here before the append, as this pass touches the set anyway. A key named
    # twice: its second append finds the first one's records unfetched.
    seen = None if len(marked) == len(keys) else dict(index.appended)
    trailing = index.appended if seen is None else seen
    sole = index.sole
    # One pass, each set touched once: the sets are far apart in memory, and passes in C
    # (a map per field) cost more in cache misses than they saved in bytecode.
    for key, rs, n in zip(keys, map(state.replica_sets.get, keys), counts):
        if rs is None or rs.leader in skip:
            missed.append(key)
            if lost is None:  # refused, as the full rules refuse a missing set
                state.next_record_id = nid
                _produce_one(state, key, n, Acks.LEADER, lost, actions, outcomes)
            continue
        lead = rs.replica[rs.leader]  # type: ignore[index]
        log = lead.log
        if not trailing or key not in trailing:
            rs.hw = lead.hw = lead.start + len(log)
            if seen is not None:
                seen[key] = None
        if n == 1:
            log.append(nid)
        else:
            log.extend(range(nid, nid + n))
        nid += n
        # The LRS is the leader alone (its only replica, or the others' SPUs offline):
        # committed at once. (Asked of the index: reading each set's LRS list was a cache
        # miss a set, 16 ms of a busy tick at 100,000 partitions.)
        if sole and key in sole:
            rs.hw = lead.hw = lead.start + len(log)
    state.next_record_id = nid
    for key in missed:
        marked.pop(key, None)
    # Their HW is written: no longer levelled without it. (The work is the keys', never the
    # index's: a tick with thousands of sets not steady calls this once for each run of
    # steady keys between them.)
    if len(marked) == len(index.keys):
        index.levelled = {}
    elif index.levelled:
        deque(map(index.levelled.pop, marked, repeat(None)), maxlen=0)
    if len(marked) == len(index.keys):
        # Every steady set (the keys are in it): none stays saved, all are fresh.
        index.saved.clear()
    else:
        index.saved.difference_update(marked)
    # Into empty marks (a busy tick's producers, after the round and the save emptied
    # them): the keys taken whole, a copy of a dict, not inserted one by one. Every steady
    # set fresh already (the round before them made the ones it levelled fresh): nothing
    # to add (an update of 100,000 keys already in was 30 ms of a busy tick).
    if not index.fresh:
        index.fresh = marked.copy()
    elif len(index.fresh) != len(index.keys):
        index.fresh.update(marked)
    if index.appended:
        index.appended.update(marked)
    else:
        index.appended = marked
    return nid - first


def _append(state: ClusterState, rs: ReplicaSet, acks: Acks, count: int, *,
            acknowledge: bool = True) -> list[Action]:
    """Append ``count`` records on the leader; the actions but ``ProduceAccepted`` (and,
    unless ``acknowledge``, but the acks=1 acknowledgement)."""
    if state.steady.keys:
        state.steady.leave(rs)
    base = rs.replica[rs.leader].leo
    first = state.next_record_id
    state.next_record_id = first + count
    rs.replica[rs.leader].log.extend(range(first, first + count))
    actions: list[Action] = []
    if acks is Acks.LEADER and acknowledge:
        records = tuple(zip(range(base, base + count), range(first, first + count)))
        actions.append(RecordsAcknowledged(rs.topic, rs.partition, acks, records))
    elif acks is Acks.ALL:
        rs.pending.extend(zip(range(base, base + count), range(first, first + count)))
    # No lag is judged here (the followers have not fetched yet); a sole LRS member commits at once.
    return actions + leader_update(state, rs)
