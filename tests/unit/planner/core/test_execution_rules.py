"""The executor's rules without a store: drift, unavailable targets, how moves and plans end."""
from __future__ import annotations

from planner.core.execution import (ExecutionState, PlanMove, final_state, finished_move,
                                    layout_drift, layout_of, plan_moves, unavailable_targets)

S = ExecutionState
MOVE = PlanMove(0, "t", 1, (0, 1), (1, 2))


def test_the_plan_current_form_reads_as_a_layout_in_partition_order():
    current = {"spus": [], "topics": [{"name": "t", "partitions": [
        {"id": 1, "replicas": [2, 0]}, {"id": 0, "replicas": [0, 1]}]}]}
    assert layout_of(current) == {"t": [[0, 1], [2, 0]]}


def test_an_unchanged_layout_has_no_drift():
    assert layout_drift({"t": [[0, 1], [1, 2]]}, {"t": [[0, 1], [1, 2]]}) == []


def test_a_changed_partition_and_a_deleted_topic_are_drift():
    drift = layout_drift({"t": [[0, 1], [1, 2]], "gone": [[0]]}, {"t": [[0, 1], [2, 1]]})
    assert drift == ["topic gone no longer exists", "t/1 changed since the plan was made"]


def test_a_changed_partition_count_is_drift():
    assert layout_drift({"t": [[0, 1]]}, {"t": [[0, 1], [1, 0]]}) == [
        "t partition count changed since the plan was made"]


def test_targets_must_be_registered_and_online():
    moves = [PlanMove(0, "t", 0, (0, 1), (1, 5)), PlanMove(1, "t", 1, (0, 1), (0, 4))]
    assert unavailable_targets(moves, registered=[0, 1, 4], online=[0, 1]) == [
        "SPU 5 is not registered", "SPU 4 is not online"]
    assert unavailable_targets(moves, registered=[0, 1, 4, 5], online=[0, 1, 4, 5]) == []


def test_a_move_in_flight_has_not_ended():
    assert finished_move(MOVE, [0, 1, 2], moving=True) is None


def test_a_move_ends_reached_only_with_exactly_the_target():
    assert finished_move(MOVE, [1, 2], moving=False).reached is True
    assert finished_move(MOVE, [0, 1], moving=False).reached is False
    assert finished_move(MOVE, None, moving=False).reached is False


def test_added_replicas_are_the_target_spus_the_move_did_not_start_with():
    assert MOVE.added == (2,)
    assert plan_moves([{"topic": "t", "partition": 1, "before": [0, 1], "after": [1, 2]}]) == [MOVE]


def test_a_running_plan_ends_done_or_failed_once_all_started_moves_ended():
    assert final_state(S.RUNNING, total=3, started=3, in_flight=0, failed=0) is S.DONE
    assert final_state(S.RUNNING, total=3, started=3, in_flight=0, failed=1) is S.FAILED
    assert final_state(S.RUNNING, total=3, started=3, in_flight=1, failed=0) is None
    assert final_state(S.RUNNING, total=3, started=2, in_flight=0, failed=0) is None


def test_a_paused_plan_never_ends_by_itself():
    assert final_state(S.PAUSED, total=3, started=3, in_flight=0, failed=0) is None


def test_the_rollback_file_is_todays_assignment_of_the_moved_partitions_as_kafka_prints_it():
    from planner.core.execution import PlanMove, rollback_reassignment

    moves = [PlanMove(0, "t", 1, (1, 2), (3, 2)), PlanMove(1, "s", 0, (0, 1), (1, 0))]
    document = rollback_reassignment(moves, {"t": [[0, 1], [2, 1]]})
    assert document == {"version": 1, "partitions": [
        {"topic": "s", "partition": 0, "replicas": [0, 1], "log_dirs": ["any", "any"]},
        {"topic": "t", "partition": 1, "replicas": [2, 1], "log_dirs": ["any", "any"]}]}


def test_a_plan_adding_spus_is_made_ready_by_registering_then_bringing_them_online():
    from planner.core.execution import PlanMove, preparation_steps, targets_not_ready

    moves = [PlanMove(0, "t", 0, (0, 1), (7, 1)), PlanMove(1, "t", 1, (1, 0), (8, 0))]
    ready = targets_not_ready(moves, registered=[0, 1, 8], online=[0, 1])
    assert ready == ([7], [8])
    assert preparation_steps(ready, {7: "rack-z"}) == [
        "spu register --id 7 --rack rack-z", "spu online 7", "spu online 8"]
    assert preparation_steps(targets_not_ready(moves, [0, 1, 7, 8], [0, 1, 7, 8]), {}) == []
