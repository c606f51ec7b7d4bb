"""An anomaly's states: alert, heal thresholds, dry runs, outcomes, one plan for all SPUs down."""
from __future__ import annotations

from healing.core import (Anomaly, AnomalyState, AnomalyType, Finding, Mode, Settings, advance,
                          due, moves_allowed, planned, plan_ended)

S = AnomalyState
SETTINGS = Settings(spu_down_alert_after_s=2, spu_down_heal_after_s=5, fix_after_s=1)


def down(spu: int) -> Finding:
    return Finding(AnomalyType.SPU_DOWN, f"spu-{spu}", f"SPU {spu} is offline", (spu,), 3)


SPREAD = Finding(AnomalyType.RACK_SPREAD, "racks", "2 partitions", count=2)


def run(anomalies, findings, now_ms):
    return advance(anomalies, findings, now_ms, SETTINGS)


def test_an_spu_down_is_detected_then_alerts_past_the_alert_threshold():
    [a] = run([], [down(4)], 0)
    assert a.state is S.DETECTED and a.detected_ms == 0
    [a] = run([a], [down(4)], 1_999)
    assert a.state is S.DETECTED
    [a] = run([a], [down(4)], 2_000)
    assert a.state is S.ALERTING and a.alerted_ms == 2_000


def test_it_is_due_for_healing_only_past_the_heal_threshold_and_not_when_off():
    [a] = run(run([], [down(4)], 0), [down(4)], 3_000)
    assert due([a], 4_999, SETTINGS, Mode.HEAL) == []
    assert due([a], 5_000, SETTINGS, Mode.HEAL) == [a]
    assert due([a], 5_000, SETTINGS, Mode.NOTIFY_ONLY) == [a]
    assert due([a], 50_000, SETTINGS, Mode.OFF) == []


def test_an_spu_back_before_the_threshold_cancels_the_anomaly_and_nothing_moves():
    [a] = run(run([], [down(4)], 0), [down(4)], 3_000)
    [a] = run([a], [], 4_000)
    assert a.state is S.CANCELLED and "nothing moved" in a.detail
    assert due([a], 10_000, SETTINGS, Mode.HEAL) == []


def test_every_spu_down_past_the_threshold_is_healed_by_one_plan_before_anything_else():
    anomalies = run([], [SPREAD, down(5), down(4)], 0)
    anomalies = run(anomalies, [SPREAD, down(5), down(4)], 5_000)
    assert [a.subject for a in due(anomalies, 5_000, SETTINGS, Mode.HEAL)] == ["spu-4", "spu-5"]
    only_spread = run(anomalies, [SPREAD], 6_000)
    assert [a.subject for a in due(only_spread, 6_000, SETTINGS, Mode.HEAL)] == ["racks"]


def test_other_kinds_alert_at_once_and_are_fixed_once_they_lasted_fix_after_s():
    [a] = run([], [SPREAD], 0)
    assert a.state is S.ALERTING
    assert due([a], 999, SETTINGS, Mode.HEAL) == [] and due([a], 1_000, SETTINGS, Mode.HEAL)


def test_a_slow_spu_is_reported_never_planned():
    slow = Finding(AnomalyType.SLOW_SPU, "spu-2", "left the LRS 3 times", (2,), 3)
    [a] = run([], [slow], 0)
    assert a.state is S.ALERTING and due([a], 10**9, SETTINGS, Mode.HEAL) == []


def test_notify_only_leaves_the_plan_planned_and_heal_plans_it_again():
    [a] = run(run([], [SPREAD], 0), [SPREAD], 2_000)
    dry = planned(a, 7, Mode.NOTIFY_ONLY)
    assert dry.state is S.PLANNED and dry.plan_id == 7
    assert due([dry], 3_000, SETTINGS, Mode.NOTIFY_ONLY) == []
    assert due([dry], 3_000, SETTINGS, Mode.HEAL) == [dry]
    [gone] = run([dry], [], 4_000)
    assert gone.state is S.CANCELLED


def test_an_applying_anomaly_ends_by_its_plans_outcome_not_by_the_detector():
    applying = planned(Anomaly(AnomalyType.SPU_DOWN, "spu-4", S.ALERTING, 0), 9, Mode.HEAL)
    assert applying.state is S.APPLYING
    [still] = run([applying], [], 1_000)
    assert still.state is S.APPLYING
    assert plan_ended(applying, None, False).state is S.APPLYING
    assert plan_ended(applying, "done", still_there=False).state is S.HEALED
    assert plan_ended(applying, "done", still_there=True).state is S.ALERTING
    failed = plan_ended(applying, "cancelled", still_there=True, reason="cancelled")
    assert failed.state is S.FAILED and "plan 9 cancelled" in failed.detail


def test_a_healed_anomaly_is_handed_back_once_and_never_reopened():
    healed = Anomaly(AnomalyType.SPU_DOWN, "spu-4", S.HEALED, 0, plan_id=9)
    assert run([healed], [], 1_000) == [healed]


def test_the_hourly_bound_leaves_what_is_left_of_it():
    assert moves_allowed(Settings(moves_per_hour=100), 60) == 40
    assert moves_allowed(Settings(moves_per_hour=100), 160) == 0


def test_moving_leadership_off_a_slow_spu_is_an_option():
    slow = Finding(AnomalyType.SLOW_SPU, "spu-2", "left the LRS 3 times", (2,), 3)
    [a] = advance([], [slow], 0, Settings(slow_spu_move_leaders=True, fix_after_s=1))
    assert due([a], 1_000, Settings(slow_spu_move_leaders=True, fix_after_s=1), Mode.HEAL) == [a]
