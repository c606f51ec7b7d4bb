"""The save's encoding of a set in the steady index (core.replication.steady): what
``set_codec.encode_status`` gives for it, byte for byte and summary included, from the few
figures that move while the set stays in the index (split from set_codec.py).

A steady set is Online with a leader, its LRS every replica, and every replica holds the
leader's log from the same start; after a round HW = LEO everywhere, and the simulated
producers (``produce.produce_spread``) only append to the leader until the next round
levels the followers (``sync._level_appended``). So at save time every replica's HW is the
set's, every follower's LEO is the set's HW, and the leader's LEO is its start plus its
log's length; a follower trails (and stores the index's clock, ``Steady.round_ms``) exactly
when the leader is ahead of HW. What moves is therefore HW, the leader's LEO, the records'
count and last id apart, the ids after them (set_codec.apart_count), and whether the
followers trail; the rest of the encoding is packed once
while the set stays in (``Steady.memo``, dropped when it leaves, rebuilt when compaction
moves its start). The fault schedules check this against ``encode_status`` for every
steady set after every step (tests/unit/cluster/adapters/test_steady_encoding.py).

With an SPU down, a set whose replica there is out of the LRS is steady too (``Steady``):
that replica neither fetches nor is judged while it stays out, so all it stores is fixed
once the leader is ahead of it, and goes in the template as it stands. Such sets were
packed whole at every encoding: 6,000 sets a busy tick at 100,000 partitions with one SPU
of 50 down.
"""
from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter
from typing import Any

import msgpack

from cluster.adapters.set_codec import (RECORDS_APART, RECORDS_BLOCK, SET_FORMAT, Summary,
                                        _extras, _new_summary, _packer, apart_count,
                                        encode_status, replica_state)
from cluster.core.replication import Key, Replica, ReplicaSet

# msgpack's nil, and its empty array.
_NIL = b"\xc0"
_EMPTY = b"\x90"
_ZERO = b"\x00"
# The marker packed in each moving field of a template (``_parts``): a uint64 whose bytes
# (0xff) no UTF-8 name holds and no figure reaches; checked by count all the same.
_MARK = 0xFFFF_FFFF_FFFF_FF5A
_MARK_PACKED = b"\xcf" + _MARK.to_bytes(8, "big")
# The slots of a template (``_parts``): the packed values it takes, by index in the tuple
# ``encode`` gives its picker: HW, the leader's LEO, a follower's clock, the records' count
# and last id apart, and the status's own tail of ids.
_HW, _LEO, _CLOCK, _COUNT, _LAST, _TAIL = range(6)

# What ``Steady.memo`` holds for a set encoded once since it joined: no template, and a log
# start no set has, so the next encoding makes one.
_SECOND = (None,)
# ... and for a set no template fits (``_parts`` refused it: a fixed field packs as the
# marker): packed whole at every encoding while it stays in, not refused again.
_WHOLE = (None, "whole")

# The default of ``encode``'s ``parts``: look them up in the memo.
_LOOK = object()

SteadyEncoder = Callable[..., tuple[bytes, Summary]]

# A steady set's *figures* (status_rows.py's figures entries): what moves in its encoding
# while it stays in the index, as ints. (HW, the leader's LEO, the log's start, the last id
# of the records kept apart or -1, the index's clock as a trailing follower stores it or -1
# for None, the ids after the records apart; then, as the save keeps them in
# ``HotState.raw``, its entry's head, status_rows.head, and its LEO at the save before, or
# -1: summaries.Saved.leo_before.) The rest of its status is its
# field's, which the entry's anchor names: ``from_figures`` rebuilds the status from both.
Figures = tuple[Any, ...]
NO_CLOCK = -1


def figured(parts: Any) -> bool:
    """Whether a set whose memo holds ``parts`` may be stored as figures: its template is
    made and every replica is in the LRS (none fixed), so every fixed field of its status
    is its anchored field's (a change of any leaves the index and writes the field again).
    The save's loop spells this test out."""
    return parts is not None and len(parts) == 10 and parts[9] is None


def figures_of(data: bytes) -> Figures | None:
    """The figures of a status ``encode`` gave for a figured set (``from_figures``' inverse:
    the set cache knows a set it committed as figures by them, less their head); None for
    any other."""
    fields = msgpack.unpackb(data)
    replicas, leader, states, extras = fields[3], fields[4], fields[15], fields[16]
    apart = extras.get(RECORDS_APART) if type(extras) is dict else None
    if apart is None or leader not in replicas or len(states) != len(replicas):
        return None
    at = replicas.index(leader)
    hw, leo = fields[7], states[at][0]
    if type(leo) is not int:
        return None
    # (A set of one replica has no follower: its figures' clock is the save's, unknown here.)
    clock = next((s[4] for i, s in enumerate(states) if i != at), None)
    clock = clock if leo != hw and clock is not None else NO_CLOCK
    last = apart[1] if apart[0] else -1
    return hw, leo, fields[13], last, clock, fields[14]


def from_figures(field: bytes, figures: Figures) -> bytes:
    """The status ``encode`` gives for a set whose anchored field is ``field`` (an encoding
    of the same set in the same stay in the index: three replicas, every one in the LRS)
    and whose figures are ``figures``, byte for byte: the field unpacked, its moving values
    replaced, packed again (msgpack packs each value one way only)."""
    hw, leo, start, last, clock, tail = figures[:6]
    fields = msgpack.unpackb(field)
    count = apart_count(fields[2], start, leo - start)
    fields[7], fields[13], fields[14] = hw, start, list(tail)
    trailing = None if leo == hw or clock == NO_CLOCK else clock
    leader = fields[4]
    for s, state in zip(fields[3], fields[15]):
        if s == leader:
            state[0], state[1], state[4] = leo, hw, None
        else:
            state[0], state[1], state[4] = hw, hw, trailing
    fields[16][RECORDS_APART] = [count, last if count else None]
    return _packer().pack(fields)


def steady_encoder(clock: int | None, memo: dict[Any, Any]) -> SteadyEncoder:
    """The encoding of steady sets for one save: ``encode(key, rs, leader[, parts])`` gives the
    set's bytes and summary. ``clock``: the index's (``Steady.round_ms``), stored for a
    follower that trails (the replicas' own are older: the index does not write them while
    the set stays in); ``memo``: ``Steady.memo``."""
    pack = _packer().pack
    trailing = pack(clock)
    new = _new_summary

    def encode(key: Key, rs: ReplicaSet, ref: Replica, parts: Any = _LOOK
               ) -> tuple[bytes, Summary]:
        # ``parts``: what the memo holds for the key, when the caller asked it already.
        log, start = ref.log, ref.start
        # Packed whole, every replica's figures read (the LRS followers' clock the index's):
        # a set's first encoding since it joined, and a set no template fits.
        if parts is _LOOK:
            parts = memo.get(key)
        if parts is None:
            # Its first encoding since it joined. The template is made at the next
            # (``_SECOND``), so a set encoded once while it stays in (an idle one: the
            # save passes over it from then on) never pays for one; a topic of 100,000
            # partitions paid 0.7 s for them at its first tick, nearly all idle.
            memo[key] = _SECOND
            return encode_status(rs, ref, steady=True, lrs_clock=clock)
        if parts is _WHOLE:
            return encode_status(rs, ref, steady=True, lrs_clock=clock)
        if parts[0] != start:
            parts = _parts(rs, ref)
            if parts is None:  # no template for it while it stays in
                memo[key] = _WHOLE
                return encode_status(rs, ref, steady=True, lrs_clock=clock)
            memo[key] = parts
            if parts is _SECOND:  # a template later (``_parts``)
                return encode_status(rs, ref, steady=True, lrs_clock=clock)
        _, fmt, pick, leader, lrs, resolution, epoch, replicas, at, fixed = parts
        hw = rs.hw
        size = len(log)
        leo = start + size
        h = pack(hw)
        # set_codec.apart_count, spelled out: the records apart end at a block boundary.
        end = leo - (leo + key[1]) % RECORDS_BLOCK
        count = end - start if end > start else 0
        if count:
            n, last = pack(count), pack(log[count - 1])
        else:
            n, last = _ZERO, _NIL
        tail = pack(log[count:]) if count < size else _EMPTY
        if leo == hw:  # levelled: no follower trails
            lead, clocks = h, _NIL
        else:
            lead, clocks = pack(leo), trailing
        figures: tuple[tuple[int, int, int], ...]
        if pick is None:
            # Three replicas (nearly every set), by the leader's place, spelled out: the
            # picker and a comprehension cost a third of the encoding.
            x, y, z = replicas
            if at == 0:
                data = fmt % (h, tail, lead, h, h, h, clocks, h, h, clocks, n, last)
                figures = ((x, leo, hw), (y, hw, hw), (z, hw, hw))
            elif at == 1:
                data = fmt % (h, tail, h, h, clocks, lead, h, h, h, clocks, n, last)
                figures = ((x, hw, hw), (y, leo, hw), (z, hw, hw))
            else:
                data = fmt % (h, tail, h, h, clocks, h, h, clocks, lead, h, n, last)
                figures = ((x, hw, hw), (y, hw, hw), (z, leo, hw))
        else:
            data = fmt % pick((h, lead, clocks, n, last, tail))
            figures = tuple([(s, leo if s == leader else hw, hw) for s in replicas]
                            if fixed is None else
                            [fixed.get(s) or (s, leo if s == leader else hw, hw)
                             for s in replicas])
        return data, new(Summary, (leader, lrs, resolution, hw, leo, figures, epoch))

    return encode


def _parts(rs: ReplicaSet, ref: Replica) -> tuple[Any, ...] | None:
    """What the set's encoding keeps while it stays in the index: the log start it was
    built at, the template (``bytes %``: every fixed field packed, a ``%b`` for each moving
    one) and the picker of its values, then the summary's fixed fields, and the figures of
    each replica out of the LRS (None: none is). None for a set with extras (a move,
    deadline, deposed or unaware replica is never steady: packed whole, ``_WHOLE``);
    ``_SECOND`` while a replica out of the LRS holds the leader's whole log (its stored
    clock is None until the leader gains a record: tried again at the next encoding).

    The template is the set's whole encoding packed once with a marker in each moving
    field (one C call, where packing field by field cost 8 us a set: every set pays it
    when it joins the index, all of them at a tick after a restart)."""
    if _extras(rs):
        return None
    leader, mark, lrs = rs.leader, _MARK, rs.lrs
    leo = ref.start + len(ref.log)
    slots = [_HW, _TAIL]
    states: list[tuple[Any, int, bool, int, int | None]] = []
    fixed: dict[int, tuple[int, int, int]] = {}
    for s in rs.replicas:
        r = rs.replica[s]
        if s == leader:
            states.append((mark, mark, r.claims_leadership, r.seen_attempt, None))
            slots += (_LEO, _HW)
        elif s in lrs:
            states.append((mark, mark, r.claims_leadership, r.seen_attempt, mark))
            slots += (_HW, _HW, _CLOCK)
        else:
            # Out of the LRS, its SPU offline (``Steady``): it neither fetches nor is judged
            # while the set stays in, so what it stores is fixed, once it trails the leader
            # (its clock is stored from then on): packed in the template as it stands.
            n = r.start + len(r.log)
            if n >= leo:
                return _SECOND  # not yet: made at a later encoding, once the leader gained
            states.append(replica_state(r, ref, r.caught_up_ms))
            fixed[s] = (s, n, r.hw)
    slots += (_COUNT, _LAST)
    packed = _packer().pack((
        SET_FORMAT, rs.topic, rs.partition, rs.replicas, leader, lrs, rs.resolution, mark,
        rs.epoch, rs.candidate, rs.attempt, rs.tried, rs.pending, ref.start, mark, states,
        {RECORDS_APART: [mark, mark]}))
    fmt = packed.replace(b"%", b"%%").replace(_MARK_PACKED, b"%b")
    if fmt.count(b"%b") != len(slots):  # the marker's bytes elsewhere too: never steady-short
        return None
    # Three replicas all in the LRS take their values in the order ``encode`` spells out
    # (no picker).
    pick = None if len(rs.replicas) == 3 and not fixed else itemgetter(*slots)
    return (ref.start, fmt, pick, leader, tuple(lrs), rs.resolution,
            rs.epoch, tuple(rs.replicas), rs.replicas.index(leader),  # type: ignore[arg-type]
            fixed or None)

