"""The operator's main flows in a real Chromium against the live server."""
from __future__ import annotations

import json

import pytest

from tests.browser.conftest import NARROW
from tests.helpers import register_spus, store_counts


@pytest.fixture
def five_spus(transactional_db):
    from cluster.models import ClusterState
    # transactional_db flushes the row migration 0002 made; store_counts reads it.
    ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
    register_spus(0, 1, 2, 3, 4, online=True)


def _map_rows(page, scope: str) -> list[str]:
    return page.locator(f"{scope} tr[data-replicas]").evaluate_all(
        "rows => rows.map(r => r.dataset.replicas)")


def test_an_anonymous_visitor_is_sent_to_login_and_can_log_in(new_page, operator):
    page = new_page()
    page.goto("/topics/")
    assert "/login/" in page.url
    page.fill("#id_username", "op")
    page.fill("#id_password", "op-pass-123")
    page.click("button[type=submit]")
    page.wait_for_url("**/topics/")
    assert page.locator("h1").inner_text() == "Topics"


def test_preview_then_create_shows_the_same_map_on_the_detail_page(new_page, operator,
                                                                   five_spus, shoot):
    page = new_page(operator)
    page.goto("/new-topic/")
    page.fill("#id_name", "orders")
    page.fill("#id_partitions", "15")
    page.fill("#id_replication", "3")
    page.click("button[value=preview]")
    assert "Nothing has been stored yet" in page.locator("#preview").inner_text()
    previewed = _map_rows(page, "#preview table.replica-map")
    assert previewed[:3] == ["0,1,2", "1,2,3", "2,3,4"] and len(previewed) == 15
    assert store_counts()["topics"] == 0
    shoot(page, "create-topic-preview-1280")
    page.click("button[value=create]")
    page.wait_for_url("**/topics/orders/")
    assert _map_rows(page, "table.replica-map") == previewed
    assert _map_rows(page, "table.partitions") == previewed


def test_validate_only_stores_nothing(new_page, operator, five_spus, tmp_path, shoot):
    path = tmp_path / "assignment.json"
    path.write_text(json.dumps({"partitions": [{"id": 0, "replicas": [0, 1, 2]},
                                               {"id": 1, "replicas": [1, 2, 0]}]}))
    page = new_page(operator)
    page.goto("/new-topic/upload/")
    page.fill("#id_name", "custom-topic")
    page.set_input_files("#id_file", str(path))
    before = store_counts()
    page.click("button[value=validate]")
    assert "Validation passed" in page.locator("#preview").inner_text()
    assert _map_rows(page, "#preview table.replica-map") == ["0,1,2", "1,2,0"]
    assert store_counts() == before
    shoot(page, "upload-validated-1280")


def test_an_invalid_file_shows_partition_and_rule(new_page, operator, five_spus, tmp_path, shoot):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"id": 0, "replicas": [0, 1]}, {"id": 1, "replicas": [1, 1]},
                                {"id": 2, "replicas": [2, 9]}]))
    page = new_page(operator, NARROW)
    page.goto("/new-topic/upload/")
    page.fill("#id_name", "bad-topic")
    page.set_input_files("#id_file", str(path))
    page.click("button[value=create]")
    problems = page.locator(".problems")
    assert "nothing was stored" in problems.inner_text()
    assert problems.locator("tr[data-rule=unique] td").first.inner_text() == "1"
    assert store_counts()["topics"] == 0
    shoot(page, "upload-problems-400")


def test_the_heatmap_numbers_match_the_store(new_page, operator, five_spus):
    from cluster.models import Partition
    from cluster.services import topic_create
    topic_create(name="orders", partitions=7, replication=3)
    page = new_page(operator)
    page.goto("/heatmaps/")
    page.wait_for_selector("#chart-leaders[data-drawn] .main-svg")
    drawn = page.evaluate("""() => {
        const el = document.getElementById('chart-leaders');
        return {z: el.data[0].z, ids: el.data[0].customdata.map(r => r.map(c => c[0]))};
    }""")
    for z_row, id_row in zip(drawn["z"], drawn["ids"]):
        for count, spu in zip(z_row, id_row):
            assert count == Partition.objects.filter(leader=spu).count()
    page.hover("#chart-leaders .nsewdrag")
    assert page.locator("#chart-leaders .modebar-btn[data-title*='png' i]").count() == 1


def test_a_viewer_cannot_create_a_topic(new_page, viewer, five_spus):
    page = new_page(viewer)
    page.goto("/topics/")
    assert page.locator("a[href='/new-topic/']").count() == 0
    response = page.goto("/new-topic/")
    assert response.status == 403
    assert "operator role" in page.locator("main").inner_text()
    assert store_counts()["topics"] == 0
