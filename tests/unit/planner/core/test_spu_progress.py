"""Per-SPU progress of a plan being carried out, and each move's outcome."""
from __future__ import annotations

from planner.core.execution import PlanMove
from planner.core.spu_progress import MoveOutcome, move_outcome, per_spu_progress

# Move 0 takes a replica of t/0 from SPU 1 to SPU 4; move 1 takes t/1's replicas from
# SPUs 1 and 2 to SPUs 4 and 5; move 2 only makes SPU 3 lead t/2 (no SPU gains or loses).
MOVES = [PlanMove(0, "t", 0, (0, 1), (0, 4)),
         PlanMove(1, "t", 1, (1, 2, 3), (4, 5, 3)),
         PlanMove(2, "t", 2, (2, 3), (3, 2))]


def rows_by_spu(landed: dict[int, int], in_flight: list[int]) -> dict[int, dict]:
    return {r["spu"]: r for r in per_spu_progress(MOVES, landed, in_flight)}


def test_only_spus_that_gain_or_give_up_a_replica_have_a_row():
    assert list(rows_by_spu({}, [])) == [1, 2, 4, 5]


def test_before_anything_lands_every_total_is_counted_and_nothing_done():
    rows = rows_by_spu({}, [])
    assert (rows[4]["moves_in_total"], rows[4]["moves_in_done"]) == (2, 0)
    assert (rows[1]["moves_out_total"], rows[1]["moves_out_done"]) == (2, 0)
    assert (rows[2]["moves_in_total"], rows[2]["moves_out_total"]) == (0, 1)


def test_a_landed_move_counts_as_done_on_both_sides_and_its_bytes_on_the_gaining_spus():
    rows = rows_by_spu({1: 3000}, [])
    assert rows[4]["moves_in_done"] == rows[5]["moves_in_done"] == 1
    assert rows[1]["moves_out_done"] == rows[2]["moves_out_done"] == 1
    assert rows[4]["bytes_moved"] == rows[5]["bytes_moved"] == 3000
    assert rows[1]["bytes_moved"] == rows[2]["bytes_moved"] == 0


def test_spu_bytes_add_up_to_the_plan_bytes_copied():
    landed = {0: 1024, 1: 3000}
    plan_bytes = sum(copied * len(MOVES[i].added) for i, copied in landed.items())
    assert sum(r["bytes_moved"] for r in per_spu_progress(MOVES, landed, [])) == plan_bytes


def test_a_move_in_flight_counts_once_on_every_spu_it_touches():
    rows = rows_by_spu({}, [1, 2])
    assert {spu: r["moves_in_flight"] for spu, r in rows.items()} == {1: 1, 2: 1, 4: 1, 5: 1}


def test_a_started_move_neither_in_flight_nor_landed_failed():
    seen = {i: move_outcome(i, started={0, 1, 2}, in_flight={1}, landed={0: 10})
            for i in range(4)}
    assert seen == {0: MoveOutcome.DONE, 1: MoveOutcome.IN_FLIGHT, 2: MoveOutcome.FAILED,
                    3: MoveOutcome.WAITING}


def test_a_move_never_started_reads_not_started_once_the_plan_ended():
    kwargs = dict(started={0}, in_flight=set(), landed={})
    assert move_outcome(1, **kwargs, ended=True) is MoveOutcome.NOT_STARTED
    assert move_outcome(1, **kwargs, ended=False) is MoveOutcome.WAITING
    assert move_outcome(0, **kwargs, ended=True) is MoveOutcome.FAILED
