"""The workbench in Chromium: a what-if adding an SPU to a rack, read on the plan's page."""
from __future__ import annotations

import pytest

from tests.helpers import register_spus
from tests.waits import BROWSER_WAIT_MS


@pytest.fixture
def racked_topics(transactional_db, monkeypatch):
    from cluster.models import ClusterState
    from cluster.services import topic_create

    ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
    for r, rack in enumerate(["rack-a", "rack-b", "rack-c", "rack-d"]):
        register_spus(*range(r * 3, r * 3 + 3), rack=rack)
    topic_create(name="orders", partitions=12, replication=3)
    topic_create(name="clicks", partitions=8, replication=2)
    # No worker in this test: the plan is computed in the request.
    monkeypatch.setattr("planner.services.worker_running", lambda: False)


def test_a_what_if_adding_an_spu_to_a_rack_shows_both_heatmaps_and_the_moves(
        new_page, operator, racked_topics, shoot):
    page = new_page(operator)
    page.goto("/planner/")
    shoot(page, "planner-workbench-1280")
    page.fill("#id_add_spu", "12:rack-a")
    page.click("#run-plan")
    page.wait_for_url("**/planner/plans/*/")
    assert page.locator("h1").inner_text().startswith("Plan ")
    for chart in ("replicas-before", "replicas-after", "leaders-before", "leaders-after",
                  "topics-before", "topics-after"):
        page.wait_for_selector(f"#chart-{chart}[data-drawn='1']")
        assert page.locator(f"#chart-{chart} .main-svg").count() > 0, chart
    moves = page.locator("#move-table tbody tr")
    assert moves.count() > 0
    assert any("12" in moves.nth(i).locator("td").nth(3).inner_text()
               for i in range(moves.count()))
    assert page.locator("#apply-plan").is_visible()  # operators may apply (refused for a missing SPU)
    shoot(page, "planner-plan-1280")


def test_a_viewer_reads_the_workbench_without_a_run_button(new_page, viewer, racked_topics):
    page = new_page(viewer)
    page.goto("/planner/")
    assert page.locator("h1").inner_text() == "Planner"
    assert page.locator("#run-plan").count() == 0 and page.locator("#run-grid").count() == 0


def test_a_plan_being_computed_shows_its_progress_then_opens_on_the_result(
        new_page, operator, racked_topics, monkeypatch):
    from planner import core
    from planner.services import plan_compute, plan_request

    monkeypatch.setattr("planner.services.worker_running", lambda: True)
    monkeypatch.setattr("planner.services._enqueue", lambda task, record: None)
    record = plan_request(scenario=core.Scenario(add_spus=(core.Spu(12, "rack-a"),)),
                          options=core.Options(), by=operator)
    page = new_page(operator)
    page.goto(f"/planner/plans/{record.pk}/")
    assert page.locator("#job-progress .job-stage").inner_text() == "queued"
    assert page.locator("#cancel-job").is_visible()
    plan_compute(plan_id=record.pk)  # what the worker would do
    page.wait_for_selector("#chart-replicas-after[data-drawn='1']", timeout=BROWSER_WAIT_MS)
    assert page.locator("#plan-state").inner_text() == "pending"
    assert page.locator("#job-progress").count() == 0


def test_the_grid_table_sorts_by_a_column(new_page, operator, racked_topics, shoot):
    from planner import core
    from planner.services import grid_request

    grid = grid_request(up_to=1, options=core.Options(), engine="local", by=operator)
    page = new_page(operator)
    page.goto(f"/planner/grids/{grid.pk}/")
    page.wait_for_selector("#chart-scatter[data-drawn='1']")
    page.click("#grid-table th:has-text('replicas moved')")
    values = page.locator("#grid-table tbody tr td:nth-child(2)").evaluate_all(
        "cells => cells.map(c => parseFloat(c.dataset.value))")
    assert values == sorted(values) and len(values) == 20
    page.click("#grid-table th:has-text('replicas moved')")
    again = page.locator("#grid-table tbody tr td:nth-child(2)").evaluate_all(
        "cells => cells.map(c => parseFloat(c.dataset.value))")
    assert again == sorted(values, reverse=True)
    shoot(page, "planner-grid-1280")
