"""A queued plan's computation: progress by stage over Channels, and a cancel heard mid-way."""
from __future__ import annotations

import pytest

from planner import core
from planner.models import Plan
from planner.services import plan_cancel, plan_compute, plan_request

pytestmark = pytest.mark.django_db


@pytest.fixture
def heard(monkeypatch) -> list[dict]:
    """Every progress message the reporter publishes, with no throttling."""
    messages: list[dict] = []
    monkeypatch.setattr("planner.progress.REPORT_EVERY_S", 0.0)
    monkeypatch.setattr("planner.progress.publish_progress",
                        lambda kind, pk, state, progress, reason="": messages.append(
                            {"kind": kind, "id": pk, "state": state, **progress}))
    return messages


def _queued_plan() -> Plan:
    return plan_request(scenario=core.Scenario(add_spus=(core.Spu(12, "rack-a"),)),
                        options=core.Options(), by="tester")


def test_the_computation_reports_its_stages_in_order_with_a_growing_fraction(
        planned_cluster, queued, heard):
    record = _queued_plan()
    assert plan_compute(plan_id=record.pk).state == "pending"
    stages = [m["stage"] for m in heard]
    assert stages[0] == "preparing" and stages[-1] == "storing"
    assert "placing replicas" in stages and "leaders and order" in stages
    fractions = [m["fraction"] for m in heard]
    assert fractions == sorted(fractions) and fractions[-1] < 1.0
    assert {(m["kind"], m["id"]) for m in heard} == {("plan", record.pk)}


def test_a_cancel_during_placement_stops_the_computation_and_stores_no_moves(
        planned_cluster, queued, heard, monkeypatch):
    record = _queued_plan()

    def cancel_once_placing(kind, pk, state, progress, reason=""):
        heard.append(progress)
        if progress["stage"] == "placing replicas" and state == "computing":
            plan_cancel(plan_id=pk, by="op")

    monkeypatch.setattr("planner.progress.publish_progress", cancel_once_placing)
    result = plan_compute(plan_id=record.pk)
    assert result.state == "cancelled"
    assert result.moves == [] and result.target == {}
    assert [m["stage"] for m in heard].count("placing replicas") == 1


def test_a_plan_the_planner_cannot_make_ends_failed_with_the_reason(planned_cluster, queued):
    record = _queued_plan()
    Plan.objects.filter(pk=record.pk).update(scenario={"remove_spus": [99]})
    result = plan_compute(plan_id=record.pk)
    assert result.state == "failed"
    assert "unknown SPU 99" in result.reason


def test_a_planner_crash_ends_the_plan_failed_instead_of_computing_for_ever(
        planned_cluster, queued, monkeypatch):
    record = _queued_plan()

    def crash(*args, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr("planner.services.core.plan", crash)
    with pytest.raises(RuntimeError):
        plan_compute(plan_id=record.pk)
    failed = Plan.objects.get(pk=record.pk)
    assert failed.state == "failed" and "out of memory" in failed.reason


def test_progress_reaches_the_plans_websocket_group(planned_cluster, queued, redis_url):
    from asgiref.sync import async_to_sync
    from channels.layers import get_channel_layer

    record = _queued_plan()
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(f"plan-{record.pk}", channel)
    plan_compute(plan_id=record.pk)
    first = async_to_sync(layer.receive)(channel)
    assert first["type"] == "job.progress" and first["id"] == record.pk
    assert first["stage"] == "preparing"
