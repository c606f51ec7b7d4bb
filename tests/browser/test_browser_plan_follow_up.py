"""In Chromium (issue 19, items 7, 9 and 12): a drain previewed move by move, then applied
with a throttle; a second tab's apply lands on the plan with a message; a cancelled plan's
rest planned again; a plan that adds an SPU walks through register, online, apply."""
from __future__ import annotations

import pytest

from tests.helpers import register_spus
from tests.waits import BROWSER_WAIT_MS

pytestmark = pytest.mark.redis


@pytest.fixture
def cluster(transactional_db, redis_url, monkeypatch):
    """Six SPUs in three racks, one topic of RF 2; no worker (the tests step the ticks)."""
    from cluster.models import ClusterState
    from cluster.services import topic_create

    ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
    for r, rack in enumerate(["rack-a", "rack-b", "rack-c"]):
        register_spus(r * 2, r * 2 + 1, rack=rack, online=True)
    topic_create(name="orders", partitions=9, replication=2)
    monkeypatch.setattr("planner.services.worker_running", lambda: False)


def held_by(spu: int) -> list[str]:
    from cluster.models import Partition

    return [f"{p.topic.name}/{p.index}" for p in Partition.objects.select_related("topic")
            if spu in p.replicas]


def test_a_drain_is_previewed_move_by_move_then_applied_with_a_throttle(
        new_page, operator, cluster, shoot):
    from planner.execution import plan_wait
    from planner.models import PlanExecution

    held = held_by(2)
    page = new_page(operator)
    page.goto("/spus/")
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("a[href='/planner/drain/2/']")  # the SPU row's Drain link: the dry run first
    page.wait_for_url("**/planner/drain/2/")
    rows = page.locator("#drain-moves tbody tr")
    assert sorted(rows.nth(i).get_attribute("data-move") for i in range(rows.count())) == \
        sorted(held)
    assert f"moves the {len(held)} replicas" in page.locator("#drain-summary").inner_text()
    shoot(page, "planner-drain-preview-1280")
    page.fill("#id_max_moves_per_spu", "2")
    page.fill("#id_throttle_bytes_per_s", "5000000")
    page.check("#id_confirm")
    page.click("#apply-drain")
    page.wait_for_url("**/planner/plans/*/#apply")
    execution = PlanExecution.objects.get()
    assert (execution.moves_total, execution.max_moves_per_spu,
            execution.throttle_bytes_per_s) == (len(held), 2, 5_000_000)
    assert plan_wait(plan_id=execution.plan_id, timeout_s=60)
    page.wait_for_selector("#apply-status [data-field='state']:text('done')",
                           timeout=BROWSER_WAIT_MS)
    assert held_by(2) == []


def test_a_second_tab_lands_on_the_plan_with_a_message_and_a_cancelled_plans_rest_is_planned(
        new_page, operator, cluster):
    from cluster.services.waiting import wait_until
    from planner.execution import plan_wait
    from planner.models import Plan, PlanExecution

    register_spus(6, rack="rack-a", online=True)
    register_spus(7, rack="rack-b", online=True)
    first = new_page(operator)
    first.goto("/planner/")
    first.click("#run-plan")
    first.wait_for_url("**/planner/plans/*/")
    plan = Plan.objects.get()
    second = new_page(operator)
    second.goto(f"/planner/plans/{plan.pk}/")
    for tab in (first, second):
        tab.fill("#id_max_moves", "1")
        tab.check("#id_confirm")
    first.click("#apply-plan")
    first.wait_for_selector("#apply-progress")
    second.click("#apply-plan")
    second.wait_for_url(f"**/planner/plans/{plan.pk}/#apply")
    assert "already applied" in second.content()
    second.reload()  # a reload reads the page again; it posts nothing
    assert PlanExecution.objects.count() == 1

    assert wait_until(lambda: PlanExecution.objects.get().moves_done >= 1, timeout_s=60)
    assert len(PlanExecution.objects.get().started) < len(plan.moves), "moves left to cancel"
    first.once("dialog", lambda dialog: dialog.accept())
    first.click("#apply form[action$='/cancel/'] button")
    assert plan_wait(plan_id=plan.pk, timeout_s=60)
    first.goto(f"/planner/plans/{plan.pk}/")
    assert first.locator("td.outcome-not-started").count() >= 1
    assert first.locator("td.outcome-waiting").count() == 0
    first.click("#plan-rest button")
    first.wait_for_url("**/planner/plans/*/")
    rest = Plan.objects.latest("created_at")
    assert rest.pk != plan.pk and f"/planner/plans/{rest.pk}/" in first.url


def test_a_plan_that_adds_an_spu_walks_through_register_online_apply(new_page, operator,
                                                                    cluster):
    from cluster.models import Spu
    from planner.models import PlanExecution

    page = new_page(operator)
    page.goto("/planner/")
    page.fill("#id_add_spu", "7:rack-b")
    page.click("#run-plan")
    page.wait_for_url("**/planner/plans/*/")
    assert "SPU 7 in rack-b" in page.locator("#add-spus").inner_text()
    page.click("#register-spus")
    page.wait_for_selector("#online-spus")
    assert Spu.objects.get(pk=7).rack == "rack-b"
    page.click("#online-spus")
    page.wait_for_selector("#apply-form")
    assert page.locator("#add-spus").count() == 0
    page.check("#id_confirm")
    page.click("#apply-plan")
    page.wait_for_selector("#apply-progress")
    assert PlanExecution.objects.get().state == "running"
