"""Where a write goes while cuts are in force (see ``links`` for the rules).

A producer keeps writing to the leader it knows: a leader the SC deposed but
that never heard of it (``ReplicaSet.deposed``) still answers "I lead" to the
producers that reach it, so their writes land there. It acknowledges acks=0 and
acks=1 at append, as any leader; those records exist on no other replica and
are cut when it rejoins (reported, ``links.rejoin``). acks=all cannot be
acknowledged there: its followers fetch from the new leader, so the LRS it
could count on is itself alone, and the SC that would accept a smaller LRS is
out of reach; the write is refused rather than left hanging.
"""
from __future__ import annotations

from .events import (NETWORK_EXCEPTION, NOT_ENOUGH_REPLICAS, Action, ProduceAccepted,
                     ProduceRefused, ProduceRequest, RecordsAcknowledged)
from .reach import producers_reach
from .state import Acks, ClusterState, ReplicaSet


def deposed_leader(state: ClusterState, rs: ReplicaSet) -> int | None:
    """The deposed leader producers still write to, if one is running and reachable."""
    for spu in rs.deposed:
        if spu in rs.replica and not state.spus.get(spu) and producers_reach(state, spu):
            return spu
    return None


# (accepted, code, reason, base offset, record ids, actions): produce.ProduceResult's
# fields (that module imports this one, so the tuple crosses, not the class).
Outcome = tuple[bool, str | None, str | None, int | None, tuple[int, ...], tuple[Action, ...]]


def routed(state: ClusterState, req: ProduceRequest, acks: Acks) -> Outcome | None:
    """The outcome of a write a cut decides, or None for the ordinary path."""
    rs = state.replica_sets.get((req.topic, req.partition))
    if rs is None or req.count < 1:
        return None
    zombie = deposed_leader(state, rs) if rs.deposed else None
    if zombie is not None:
        return _write_deposed(state, rs, zombie, req, acks)
    if rs.leader is not None and not producers_reach(state, rs.leader):
        reason = f"producers cannot reach leader SPU {rs.leader} (network cut)"
        return (False, NETWORK_EXCEPTION, reason, None, (),
                (ProduceRefused(rs.topic, rs.partition, NETWORK_EXCEPTION, reason),))
    return None


def _write_deposed(state: ClusterState, rs: ReplicaSet, spu: int, req: ProduceRequest,
                   acks: Acks) -> Outcome:
    epoch = rs.deposed[spu]
    if acks is Acks.ALL:
        reason = (f"SPU {spu} still leads epoch {epoch} in its own eyes, cut off from the SC "
                  f"and its followers: acks=all cannot be acknowledged there")
        return (False, NOT_ENOUGH_REPLICAS, reason, None, (),
                (ProduceRefused(rs.topic, rs.partition, NOT_ENOUGH_REPLICAS, reason),))
    replica = rs.replica[spu]
    base, first = replica.leo, state.next_record_id
    ids = tuple(range(first, first + req.count))
    state.next_record_id = first + req.count
    replica.log.extend(ids)
    actions: list[Action] = [ProduceAccepted(rs.topic, rs.partition, acks, base, ids)]
    if acks is Acks.LEADER:
        records = tuple(zip(range(base, base + req.count), ids))
        actions.append(RecordsAcknowledged(rs.topic, rs.partition, acks, records, (spu,), spu))
    return (True, None, None, base, ids, tuple(actions))
