"""Issue 35.7 (b): the plan page puts its state and Apply card first and speaks in human
units: MiB not bytes, local times without microseconds, ratios rounded, and a copy rate
above the byte throttle comes with the reason."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone as dt_timezone

import pytest

from cluster.models import Spu
from cluster.services import spu_connect, spu_register
from planner.models import Plan, PlanExecution

pytestmark = [pytest.mark.django_db, pytest.mark.redis]
REBALANCE = {"anti_affinity": "on", "leader_balance": "on", "order_optimisation": "on",
             "engine": "auto"}
APPLY = {"max_moves_per_spu": "5", "max_moves": "50", "confirm": "on",
         "throttle_bytes_per_s": str(10 * 1024 * 1024)}
STARTED = datetime(2026, 11, 27, 9, 15, 42, 123456, tzinfo=dt_timezone.utc)


@pytest.fixture
def plan_id(operator_client, planned_cluster, redis_url, no_worker) -> int:
    spu_register(spu_id=12, rack="rack-a")
    for spu_id in Spu.objects.values_list("id", flat=True):
        spu_connect(spu_id=spu_id)
    assert operator_client.post("/planner/plans/new/", REBALANCE).status_code == 302
    return Plan.objects.get().pk


def _running(plan_id: int, operator_client, *, copied: int) -> PlanExecution:
    assert operator_client.post(f"/planner/plans/{plan_id}/apply/", APPLY).status_code == 302
    execution = PlanExecution.objects.get(plan_id=plan_id)
    execution.started_at = STARTED
    execution.bytes_copied = copied
    execution.bytes_moved = copied
    execution.save()
    return execution


def _page(operator_client, plan_id: int) -> str:
    return operator_client.get(f"/planner/plans/{plan_id}/").content.decode()


def test_the_apply_card_comes_before_the_metrics_and_the_charts(operator_client, plan_id):
    page = _page(operator_client, plan_id)
    assert page.index('id="plan-state"') < page.index('id="apply"') < page.index('id="metrics"')
    assert page.index('id="apply"') < page.index('id="heatmaps"') < page.index('id="moves"')


def test_ratios_and_bytes_in_the_metric_tables_read_for_people(operator_client, plan_id):
    plan = Plan.objects.get(pk=plan_id)
    plan.metrics = {**plan.metrics, "moved_to_lower_bound": 2 / 3,
                    "bytes_moved": 3 * 1024 * 1024 + 512 * 1024}
    plan.save()
    page = _page(operator_client, plan_id)
    assert "0.6666666" not in page
    assert '<tr data-metric="moved_to_lower_bound"><th>moved_to_lower_bound</th>' \
           '<td class="num">0.67</td>' in page
    assert "3.5 MiB" in page


def test_an_applied_plan_shows_mib_and_local_times_without_microseconds(operator_client,
                                                                         plan_id):
    _running(plan_id, operator_client, copied=5 * 1024 * 1024)
    page = _page(operator_client, plan_id)
    assert '<time datetime="2026-11-27T09:15:42.123456+00:00"' in page
    assert ">2026-11-27 09:15</time>" in page
    assert "09:15:42.123456" not in page.replace('datetime="2026-11-27T09:15:42.123456', "")
    assert "5 MiB" in page and "10 MiB/s" in page  # bytes copied; the throttle
    assert str(5 * 1024 * 1024) not in page


def test_a_rate_above_the_byte_throttle_comes_with_the_reason(operator_client, plan_id):
    execution = _running(plan_id, operator_client, copied=0)
    calm = _page(operator_client, plan_id)
    assert 'id="rate-note" hidden' in calm
    # 100 MiB copied in the first second or so against a 10 MiB/s throttle.
    execution.started_at = datetime.now(dt_timezone.utc) - timedelta(seconds=2)
    execution.bytes_copied = 100 * 1024 * 1024
    execution.save()
    page = _page(operator_client, plan_id)
    assert 'id="rate-note">Why the copy rate is above the throttle' in page
