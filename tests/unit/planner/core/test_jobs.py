"""The workbench's job rules: engine choice past a size, progress and its estimate."""
from __future__ import annotations

import pytest

from planner.core.jobs import EngineChoice, PlanState, Stage, choose_engine, estimate


def test_auto_runs_in_process_up_to_the_threshold():
    assert choose_engine(EngineChoice.AUTO, 10_000, 10_000) == EngineChoice.LOCAL


def test_auto_picks_spark_past_the_threshold():
    assert choose_engine(EngineChoice.AUTO, 10_001, 10_000) == EngineChoice.SPARK


@pytest.mark.parametrize("choice", [EngineChoice.LOCAL, EngineChoice.SPARK])
def test_an_explicit_engine_is_kept_whatever_the_size(choice):
    assert choose_engine(choice, 1, 10**9) == choice


def test_the_estimate_extrapolates_the_pace_so_far():
    progress = estimate(Stage.SCENARIOS, 25, 95, 2.0)
    assert progress.fraction == pytest.approx(0.25)
    assert progress.eta_s == pytest.approx(6.0)


def test_a_stage_fills_its_own_span_of_the_bar():
    assert estimate(Stage.PLACING, 0, 10, 1.0).fraction == pytest.approx(0.05)
    assert estimate(Stage.PLACING, 10, 10, 1.0).fraction == pytest.approx(0.8)
    assert estimate(Stage.STORING, 1, 1, 1.0).fraction == pytest.approx(1.0)


def test_there_is_no_estimate_before_any_work_is_done():
    assert estimate(Stage.QUEUED, 0, 100, 1.0).eta_s is None
    assert estimate(Stage.SCENARIOS, 0, 0, 1.0).fraction == 0.0


def test_progress_serialises_stage_fraction_and_estimate():
    assert estimate(Stage.SCENARIOS, 1, 4, 1.0).as_dict() == {
        "stage": "planning scenarios", "fraction": 0.2375, "eta_s": 3.2}


def test_the_states_are_those_of_plan_status_plus_computing():
    assert {s.value for s in PlanState} == {"computing", "pending", "running", "paused",
                                            "done", "cancelled", "failed"}
