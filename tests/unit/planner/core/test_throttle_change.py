"""A change of a running plan's throttles, and the moves' states as one enum."""
from __future__ import annotations

from planner.core.execution import (KEEP, MAX_BYTES_PER_S, ByteBucket, MoveBook, MoveState,
                                    RETUNABLE, ExecutionState, Throttles, full_bucket, refill,
                                    retuned, throttle_problem, within_byte_rate)

NOW = Throttles(5, 50, 1000)


def test_a_change_keeps_what_it_does_not_name():
    assert retuned(NOW, max_moves=10) == Throttles(5, 10, 1000)
    assert retuned(NOW) == NOW


def test_none_removes_the_byte_throttle_and_keep_does_not():
    assert retuned(NOW, bytes_per_s=None).bytes_per_s is None
    assert retuned(NOW, bytes_per_s=KEEP).bytes_per_s == 1000


def test_values_no_execution_may_run_with_name_their_field():
    assert throttle_problem(Throttles(0, 50, None))[0] == "max_moves_per_spu"
    assert throttle_problem(Throttles(5, 0, None))[0] == "max_moves"
    assert throttle_problem(Throttles(5, 50, 0))[0] == "throttle_bytes_per_s"
    assert throttle_problem(Throttles(5, 50, MAX_BYTES_PER_S + 1))[0] == "throttle_bytes_per_s"
    assert throttle_problem(Throttles(1, 1, None)) is None


def test_only_a_plan_under_way_may_change_its_throttle():
    assert RETUNABLE == {ExecutionState.RUNNING, ExecutionState.PAUSED}


def test_a_lowered_byte_rate_lets_no_burst_of_the_old_one_through():
    bucket = full_bucket(10_000, 0)
    lowered = refill(bucket, 100, 50)
    assert lowered.tokens == 100
    assert within_byte_rate([150, 150], lowered, 100)[0] == 1


def test_a_byte_rate_set_on_a_plan_that_had_none_starts_with_one_burst():
    # The bucket stored at apply without a rate holds nothing, as of the apply.
    assert refill(ByteBucket(0, 0), 1000, 60_000).tokens == 1000


def test_each_move_has_one_state():
    book = MoveBook.of(5, started=[0, 1, 2], in_flight=[1], landed={0: 10})
    assert book.states == (MoveState.DONE, MoveState.IN_FLIGHT, MoveState.FAILED,
                           MoveState.WAITING, MoveState.WAITING)
    assert book.indexes(MoveState.WAITING) == [3, 4]
    assert sum(book.counts().values()) == 5


def test_once_the_plan_ended_a_move_never_started_says_so():
    book = MoveBook.of(2, started=[0], in_flight=[], landed={0: 1}, ended=True)
    assert book.states == (MoveState.DONE, MoveState.NOT_STARTED)
