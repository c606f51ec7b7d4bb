"""A move in flight survives the Redis encoding; values written before moves decode without one."""
from __future__ import annotations

import msgpack

from cluster.adapters.hot_state import decode_move, decode_set, encode_move, encode_set
from cluster.core.replication import MovePhase, Reassignment, Replica, ReplicaSet


def moving_set() -> ReplicaSet:
    replica = {s: Replica(s, [1, 2, 3] if s != 3 else [1]) for s in (0, 1, 3)}
    move = Reassignment([0, 1], [1, 3], True, 5000, 100, 250, True, "cancelled",
                        MovePhase.ROLLING_BACK, [3])
    return ReplicaSet("t", 0, [0, 1, 3], replica, 0, [0, 1], hw=3, move=move)


def test_a_move_in_flight_round_trips_through_the_set_encoding():
    rs = moving_set()
    back = decode_set(encode_set(rs))
    assert back.move == rs.move
    assert back.move.phase is MovePhase.ROLLING_BACK
    assert back.replicas == [0, 1, 3] and back.replica[3].log == [1]


def test_a_set_without_a_move_stores_no_move_field():
    rs = moving_set()
    rs.move = None
    assert "move" not in msgpack.unpackb(encode_set(rs))[-1]  # the optional-fields dict
    assert decode_set(encode_set(rs)).move is None


def test_a_value_written_before_moves_existed_decodes_with_no_move():
    fields = msgpack.unpackb(encode_set(moving_set()))
    fields[-1] = {}  # what a set saved before moves existed carries
    assert decode_set(msgpack.packb(fields)).move is None


def test_the_move_helpers_are_inverse():
    move = moving_set().move
    assert decode_move(encode_move(move)) == move
    assert encode_move(None) is None and decode_move(None) is None
