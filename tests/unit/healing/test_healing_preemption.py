"""An operator's apply pre-empts self-healing: the anomaly waits, then is planned afresh."""
from __future__ import annotations

from healing.core import (AnomalyState, AnomalyType, Finding, Mode, Settings, advance, due, held,
                          planned, preempt, resume)

S = AnomalyState
SETTINGS = Settings(spu_down_alert_after_s=2, spu_down_heal_after_s=5)
DOWN = Finding(AnomalyType.SPU_DOWN, "spu-4", "SPU 4 is offline", (4,), 3)


def applying(plan_id: int = 7):
    [a] = advance(advance([], [DOWN], 0, SETTINGS), [DOWN], 3_000, SETTINGS)
    return planned(a, plan_id, Mode.HEAL)


def test_an_applying_anomaly_whose_plan_made_way_is_preempted_not_failed():
    a = preempt(applying(7), preempted_plan=7, by_plan=12)
    assert a.state is S.PREEMPTED and a.preempted_by == 12 and a.plan_id == 7


def test_only_the_anomaly_of_the_cancelled_plan_is_preempted():
    assert preempt(applying(8), preempted_plan=7, by_plan=12).state is S.APPLYING
    assert preempt(applying(7), preempted_plan=None, by_plan=None).state is S.APPLYING


def test_a_preempted_anomaly_is_not_due_while_held_then_alerts_and_is_due_again():
    a = preempt(applying(7), 7, 12)
    assert resume(a, held=True).state is S.PREEMPTED
    [still] = advance([a], [DOWN], 10_000, SETTINGS)
    assert still.state is S.PREEMPTED and due([still], 10_000, SETTINGS, Mode.HEAL) == []
    again = resume(still, held=False)
    assert again.state is S.ALERTING and again.preempted_by == 12
    assert due([again], 10_000, SETTINGS, Mode.HEAL) == [again]


def test_a_preempted_anomaly_gone_after_the_operators_plan_is_cancelled_saying_so():
    [gone] = advance([preempt(applying(7), 7, 12)], [], 10_000, SETTINGS)
    assert gone.state is S.CANCELLED and "operator's plan 12" in gone.detail


def test_self_healing_waits_while_the_operators_plan_runs_or_until_it_should_have_started():
    assert held(applied=True, ended=False, until_ms=None, now_ms=0)
    assert not held(applied=True, ended=True, until_ms=10_000, now_ms=0)
    assert held(applied=False, ended=False, until_ms=10_000, now_ms=9_999)
    assert not held(applied=False, ended=False, until_ms=10_000, now_ms=10_000)
    assert not held(applied=False, ended=False, until_ms=None, now_ms=0), "apply refused"
