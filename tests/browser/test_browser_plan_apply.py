"""Applying a plan from its page in Chromium: progress reaches the end, and the cluster's
heatmap then holds what the plan's "after" side showed; a second plan cancelled halfway
leaves a valid cluster.

The live server here speaks HTTP only, so the page's socket never opens: these tests also
show the page keeps up by reading the plan after each failed connect (the fallback)."""
from __future__ import annotations

from collections import Counter

import pytest

from tests.helpers import register_spus
from tests.waits import BROWSER_WAIT_MS

pytestmark = pytest.mark.redis


@pytest.fixture
def cluster_with_an_empty_spu(transactional_db, redis_url, monkeypatch):
    """The seed's 12 SPUs with two topics, then SPU 12 in rack-a, empty; all online."""
    from cluster.models import ClusterState
    from cluster.services import topic_create

    ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
    for r, rack in enumerate(["rack-a", "rack-b", "rack-c", "rack-d"]):
        register_spus(*range(r * 3, r * 3 + 3), rack=rack, online=True)
    topic_create(name="orders", partitions=12, replication=3)
    topic_create(name="clicks", partitions=8, replication=2)
    register_spus(12, rack="rack-a", online=True)
    monkeypatch.setattr("planner.services.worker_running", lambda: False)


def _replicas_per_spu(target: dict) -> Counter:
    return Counter(s for partitions in target.values() for p in partitions
                   for s in p["replicas"])


def test_an_operator_applies_a_rebalance_and_the_heatmap_ends_as_the_plan_said(
        new_page, operator, cluster_with_an_empty_spu, shoot):
    from planner.execution import plan_wait
    from planner.models import Plan

    page = new_page(operator)
    page.goto("/planner/")
    page.click("#run-plan")  # no scenario: rebalance the cluster as it is
    page.wait_for_url("**/planner/plans/*/")
    plan = Plan.objects.get()
    page.check("#id_confirm")
    page.click("#apply-plan")
    page.wait_for_selector("#apply-progress")
    # No worker here: the test steps the replication ticks the way `plan apply --wait` does.
    assert plan_wait(plan_id=plan.pk, timeout_s=60)
    page.wait_for_selector("#apply-status [data-field='state']:text('done')",
                           timeout=BROWSER_WAIT_MS)
    done = page.locator("#apply-status [data-field='moves_done']").inner_text()
    assert done == page.locator("#apply-status [data-field='moves_total']").inner_text()
    spu_12 = page.locator("#apply-spus tr[data-spu='12']")
    gained = spu_12.locator("[data-field='moves_in_done']").inner_text()
    assert int(gained) > 0
    assert gained == spu_12.locator("[data-field='moves_in_total']").inner_text()
    assert page.locator("#apply-status [data-field='applied_by']").inner_text() == "op"
    shoot(page, "planner-plan-applied-1280")
    page.goto("/heatmaps/")
    cells = page.locator("#rack-spu-table tbody tr")
    # The table sits in a closed <details>: text_content reads it where inner_text sees nothing.
    shown = {int(cells.nth(i).get_attribute("data-spu")):
             int(cells.nth(i).locator("[data-field='replicas']").text_content())
             for i in range(cells.count())}
    expected = _replicas_per_spu(Plan.objects.get(pk=plan.pk).target)
    assert shown == {spu: expected.get(spu, 0) for spu in shown}
    assert shown[12] > 0


def _apply_a_first_plan() -> None:
    """Rebalance onto SPU 12 and carry it out in-process, as `plan apply --wait` does."""
    import json
    from io import StringIO

    from django.core.management import call_command

    from planner.execution import plan_apply, plan_wait

    out = StringIO()
    call_command("plan", "rebalance", "--json", stdout=out, stderr=StringIO())
    first = json.loads(out.getvalue())["id"]
    plan_apply(plan_id=first)
    assert plan_wait(plan_id=first, timeout_s=120)


def _assert_cluster_valid(plan) -> None:
    """Every partition led, as many replicas as its factor, nothing moving, the store's
    lists equal to the engine's, and each list the plan's before or after."""
    from cluster.adapters import hot_state
    from cluster.models import Partition

    hot = hot_state.load()
    ends = {(m["topic"], m["partition"]): (m["before"], m["after"]) for m in plan.moves}
    for p in Partition.objects.select_related("topic"):
        rs = hot.state.replica_sets[(p.topic.name, p.index)]
        where = f"{p.topic.name}/{p.index}"
        assert rs.move is None, f"{where} still moving"
        assert p.leader is not None and rs.leader == p.leader and p.leader in p.replicas, where
        assert len(p.replicas) == p.topic.replication_factor, where
        assert p.replicas == rs.replicas == p.topic.replica_map[p.index], where
        if (p.topic.name, p.index) in ends:
            assert p.replicas in ends[(p.topic.name, p.index)], where


def test_an_operator_cancels_a_second_plan_halfway_and_the_cluster_stays_valid(
        new_page, operator, cluster_with_an_empty_spu, shoot):
    from cluster.services.waiting import wait_until
    from planner.execution import plan_wait
    from planner.models import Plan, PlanExecution

    _apply_a_first_plan()
    register_spus(13, rack="rack-b", online=True)
    page = new_page(operator)
    page.goto("/planner/")
    page.click("#run-plan")
    page.wait_for_url("**/planner/plans/*/")
    plan = Plan.objects.latest("created_at")
    assert len(plan.moves) >= 3, "enough moves to stop halfway"
    # A tight throttle: one move at a time.
    page.fill("#id_max_moves_per_spu", "1")
    page.fill("#id_max_moves", "1")
    page.check("#id_confirm")
    page.click("#apply-plan")
    page.wait_for_selector("#apply-progress")

    def execution() -> PlanExecution:
        return PlanExecution.objects.get(plan=plan)

    # No worker: the test steps the ticks, and stops them once a move has landed.
    assert wait_until(lambda: execution().moves_done >= 1, timeout_s=60)
    assert execution().moves_done < execution().moves_total
    page.wait_for_function(
        "() => +document.querySelector(\"#apply-status [data-field='moves_done']\")"
        ".textContent >= 1", timeout=BROWSER_WAIT_MS)
    page.once("dialog", lambda dialog: dialog.accept())
    page.click("#apply form[action$='/cancel/'] button")
    page.wait_for_selector("#apply-status [data-field='state']:text('cancelled')")
    assert plan_wait(plan_id=plan.pk, timeout_s=60)  # the rollback of the move in flight
    # The page still follows the plan until it ends, then loads once more.
    page.wait_for_selector("#apply[data-finished^='20']", timeout=BROWSER_WAIT_MS)
    ended = execution()
    assert ended.state == "cancelled" and ended.finished_at is not None
    assert 1 <= ended.moves_done < ended.moves_total and not ended.in_flight
    status = page.locator("#apply-status")
    assert status.locator("[data-field='state']").inner_text() == "cancelled"
    assert status.locator("[data-field='moves_done']").inner_text() == str(ended.moves_done)
    # Moves the cancel stopped before they began say so (issue 19, item 7): none waits.
    assert page.locator("#move-table .outcome-not-started").count() > 0
    assert page.locator("#move-table .outcome-waiting").count() == 0
    assert page.locator("#apply form[action$='/cancel/']").count() == 0
    shoot(page, "planner-plan-cancelled-1280")
    _assert_cluster_valid(plan)
