"""Choosing which planned moves start now: per-SPU and total caps, plan order kept."""
from __future__ import annotations

from typing import NamedTuple

import pytest

from cluster.core.replication.throttle import moved_spus, moves_to_start, spu_load


class _Move(NamedTuple):
    """Any move with these fields will do: the throttle returns the caller's own moves."""
    topic: str
    partition: int
    before: tuple[int, ...]
    after: tuple[int, ...]


def _move(p: int, before: tuple[int, ...], after: tuple[int, ...]) -> _Move:
    return _Move("t", p, before, after)


def test_a_move_loads_the_spus_that_gain_or_lose_a_replica_not_those_that_keep_one():
    assert moved_spus(_move(0, (1, 2, 3), (1, 2, 4))) == {3, 4}
    assert spu_load([_move(0, (1, 2), (1, 3)), _move(1, (2, 4), (3, 4))]) == {2: 2, 3: 2}


def test_moves_start_in_plan_order_until_an_spu_reaches_its_cap():
    pending = [_move(p, (1, 2), (1, 9)) for p in range(8)]
    assert [m.partition for m in moves_to_start(pending, [])] == [0, 1, 2, 3, 4]


def test_moves_in_flight_count_against_the_caps():
    in_flight = [_move(p, (1, 2), (1, 9)) for p in range(4)]
    pending = [_move(p, (1, 2), (1, 9)) for p in range(4, 8)] + [_move(8, (3, 4), (3, 5))]
    chosen = moves_to_start(pending, in_flight)
    assert [m.partition for m in chosen] == [4, 8]


def test_a_move_blocked_by_a_busy_spu_does_not_hold_back_the_moves_after_it():
    pending = [_move(0, (1, 2), (1, 3)), _move(1, (4, 5), (4, 6))]
    chosen = moves_to_start(pending, [], max_per_spu=1)
    assert chosen == pending and all(c is p for c, p in zip(chosen, pending))
    assert moves_to_start([_move(2, (2, 7), (7, 8))] + pending, [], max_per_spu=1) == [
        _move(2, (2, 7), (7, 8)), _move(1, (4, 5), (4, 6))]


def test_the_total_cap_and_a_partition_already_moving_are_respected():
    in_flight = [_move(0, (1,), (2,))]
    pending = [_move(0, (1,), (3,))] + [_move(p, (p + 10,), (p + 20,)) for p in range(1, 6)]
    chosen = moves_to_start(pending, in_flight, max_moves=3)
    assert [m.partition for m in chosen] == [1, 2]


def test_caps_below_one_are_refused():
    with pytest.raises(ValueError, match="at least 1"):
        moves_to_start([], [], max_per_spu=0)
