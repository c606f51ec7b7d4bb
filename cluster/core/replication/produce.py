"""Producers and consumers on top of replication (004's semantics).

acks=0 and acks=1 are acknowledged at append (acks=0 gets no acknowledgement
action at all); acks=all is refused up front when the LRS is smaller than the
topic's min_lrs (nothing appended), otherwise held as pending until the HW
passes it. Consumers read from the leader: COMMITTED (offsets < HW) by
default, UNCOMMITTED (up to the leader's LEO) when asked.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

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
    level = Acks.parse(acks)
    actions: list[Action] = []
    outcomes: dict[str | None, int] = {}
    sets = state.replica_sets
    index = state.steady
    # A steady set stays steady through an acks=0/1 append (``steady``: ``appended``):
    # its leader's log grows and nothing else does, the next round levels the followers.
    steady = index.keys if level is not Acks.ALL else {}
    appended, fresh, saved = index.appended, index.fresh, index.saved
    accepted = 0
    # Checked from the set itself: a request object per partition was a tenth of this.
    for key, count in counts:
        if key in steady and count > 0:
            # _append's effect on a steady set (its refusal checks pass: Online, a leader;
            # its leader_update moves nothing but a sole replica's HW: no follower has
            # fetched), spelled out.
            kept = sets[key]
            first = state.next_record_id
            state.next_record_id = first + count
            lead = kept.replica[kept.leader]  # type: ignore[index]
            log = lead.log
            if count == 1:
                log.append(first)
            else:
                log.extend(range(first, first + count))
            if len(kept.replicas) == 1:  # the LRS is the leader alone: committed at once
                kept.hw = lead.hw = lead.start + len(log)
            appended[key] = fresh[key] = None
            saved.discard(key)
            accepted += count
            continue
        rs = sets.get(key)
        refused = _refused(state, rs, key[0], key[1], count, level)
        if refused is not None:
            actions.append(ProduceRefused(key[0], key[1], *refused))
            outcomes[refused[0]] = outcomes.get(refused[0], 0) + count
            continue
        actions += _append(state, rs, level, count, acknowledge=False)
        accepted += count
    if accepted:
        outcomes[None] = outcomes.get(None, 0) + accepted
    return actions, outcomes


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
