"""Applying a plan from its page in Chromium: progress reaches the end, and the cluster's
heatmap then holds what the plan's "after" side showed."""
from __future__ import annotations

from collections import Counter

import pytest

from tests.helpers import register_spus

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
    page.wait_for_selector("#apply-status [data-field='state']:text('done')", timeout=10_000)
    done = page.locator("#apply-status [data-field='moves_done']").inner_text()
    assert done == page.locator("#apply-status [data-field='moves_total']").inner_text()
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
