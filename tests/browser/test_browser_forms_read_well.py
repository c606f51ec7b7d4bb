"""The upload page and the planner's forms in Chromium (issue 19, pages 5 and 6): every
problem once and in one pass, the chosen file kept, ids of their own, messages that name
what is wrong."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from tests.helpers import register_spus, store_counts


@pytest.fixture
def racked(transactional_db, monkeypatch):
    from cluster.models import ClusterState
    from cluster.services import topic_create

    # transactional_db flushes the row migration 0002 made; store_counts reads it.
    ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
    for r, rack in enumerate(["rack-a", "rack-b", "rack-c"]):
        register_spus(*range(r * 2, r * 2 + 2), rack=rack)
    topic_create(name="orders", partitions=6, replication=3)
    monkeypatch.setattr("planner.services.worker_running", lambda: False)


def test_an_upload_lists_every_problem_once_in_one_pass_and_keeps_the_file(
        new_page, operator, racked, tmp_path, shoot):
    bad = tmp_path / "bad.json"
    # Partition 1 repeats SPU 1 (a structural rule) and partition 2 names SPU 9, which
    # is not registered: both are reported at once.
    bad.write_text(json.dumps([{"id": 0, "replicas": [0, 1]}, {"id": 1, "replicas": [1, 1]},
                               {"id": 2, "replicas": [2, 9]}]))
    page = new_page(operator)
    page.goto("/new-topic/upload/")
    page.fill("#id_name", "custom-topic")
    page.set_input_files("#id_file", str(bad))
    before = store_counts()
    page.click("button[value=validate]")

    rules = page.locator(".problems tr[data-rule]").evaluate_all(
        "rows => rows.map(r => [r.dataset.rule, r.cells[0].textContent])")
    assert rules == [["unique", "1"], ["spu-exists", "2"]]
    assert page.locator("#id_file-error").inner_text() == "The file breaks 2 rules: see the list."
    text = page.locator("main").inner_text()
    for message in page.locator(".problems tr[data-rule] td:nth-child(3)").all_inner_texts():
        assert text.count(message) == 1, message
    assert "bad.json" in page.locator("#kept-file").inner_text()
    shoot(page, "upload-every-problem-1280")

    # Submitted again without choosing anything: the kept file is checked once more.
    page.click("button[value=validate]")
    assert page.locator(".problems tr[data-rule]").count() == 2
    assert page.locator("#id_file-error").inner_text() == "The file breaks 2 rules: see the list."
    assert "bad.json" in page.locator("#kept-file").inner_text()

    good = tmp_path / "good.json"
    good.write_text(json.dumps([{"id": 0, "replicas": [0, 2]}, {"id": 1, "replicas": [2, 4]}]))
    page.set_input_files("#id_file", str(good))
    page.click("button[value=validate]")
    assert "Validation passed" in page.locator("#preview").inner_text()
    assert "good.json" in page.locator("#kept-file").inner_text()
    page.click("button[value=create]")
    page.wait_for_url("**/topics/custom-topic/")
    assert store_counts()["topics"] == before["topics"] + 1


def test_the_planner_forms_have_ids_of_their_own_and_name_what_is_wrong(
        new_page, operator, racked, shoot):
    page = new_page(operator)
    page.goto("/planner/")
    ids = Counter(page.locator("[id]").evaluate_all("els => els.map(e => e.id)"))
    assert [i for i, n in ids.items() if n > 1] == []

    # The grid's label toggles the grid's box, not the what-if form's.
    what_if = page.locator("#plan-form input[name=anti_affinity]")
    grid = page.locator("#grid-form input[name=anti_affinity]")
    assert what_if.is_checked() and grid.is_checked()
    page.locator("#grid-form label", has_text="Anti affinity").click()
    assert what_if.is_checked() and not grid.is_checked()

    page.fill("#id_add_spu", "14:rack-a,14:rack-b")
    page.click("#run-plan")
    error = page.locator("#id_add_spu-error").inner_text()
    assert error.startswith("SPU 14 is listed twice") and "already exists" not in error

    page.fill("#id_add_spu", "")
    page.fill("#id_replication", "orders:0")
    page.click("#run-plan")
    error = page.locator("#id_replication-error").inner_text()
    assert "the factor 0 is too small" in error and "must be TOPIC:FACTOR" not in error

    page.fill("#id_grid_scenarios", "--add-spu 14:rack-a --add-spu 14:rack-b")
    page.click("#run-grid")
    assert "line 1: SPU 14 is listed twice" in page.locator("#id_grid_scenarios-error").inner_text()
    shoot(page, "planner-form-errors-1280")
