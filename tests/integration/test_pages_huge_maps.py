"""Huge maps stay small pages: a 100,000-partition preview, a 20,000-partition upload and a
topic longer than one page render their first rows, totals over everything, and the rest
as compact data the page pages through or as a file to download."""
from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from cluster.views.topics import PREVIEW_ROWS, PROBLEMS_SHOWN
from tests.helpers import register_spus, store_counts


@pytest.fixture
def six_spus(db):
    for rack, ids in (("rack-a", (0, 1)), ("rack-b", (2, 3)), ("rack-c", (4, 5))):
        register_spus(*ids, rack=rack)


def map_rows(html: str) -> list[str]:
    table = html[html.index("data-map-table"):html.index("</table>", html.index("data-map-table"))]
    return re.findall(r'<tr data-partition="(\d+)"', table)


def embedded_map(html: str) -> dict:
    start = html.index('<script id="map-pages" type="application/json">') + 47
    return json.loads(html[start:html.index("</script>", start)])


def upload(client, partitions: list[dict], action: str = "validate"):
    body = json.dumps({"partitions": partitions}, separators=(",", ":")).encode()
    file = SimpleUploadedFile("map.json", body, "application/json")
    return client.post("/new-topic/upload/", {"name": "huge", "file": file, "action": action})


def test_a_100000_partition_preview_renders_200_rows_and_totals_over_all(operator_client,
                                                                         six_spus):
    before = store_counts()
    response = operator_client.post("/new-topic/", {
        "name": "huge", "partitions": 100_000, "replication": 3, "min_lrs": 1,
        "max_lag": 1000, "action": "preview"})
    html = response.content.decode()
    assert response.status_code == 200 and store_counts() == before
    assert map_rows(html) == [str(i) for i in range(PREVIEW_ROWS)]
    footer = html[html.index("<tfoot>"):html.index("</tfoot>")]
    leaders = [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', footer.split("</tr>")[0])]
    assert sum(leaders) == 100_000
    pages = embedded_map(html)
    assert len(pages["map"]) == 100_000 and pages["rows"] == PREVIEW_ROWS
    assert len(response.content) < 4_000_000, len(response.content)


def test_a_short_preview_has_no_pager(operator_client, six_spus):
    html = operator_client.post("/new-topic/", {
        "name": "small", "partitions": 12, "replication": 3, "min_lrs": 1, "max_lag": 1000,
        "action": "preview"}).content.decode()
    assert len(map_rows(html)) == 12 and "data-map-pager" not in html


def test_a_valid_20000_partition_file_validates_into_a_paged_preview(operator_client, six_spus):
    spus = [[0, 2, 4], [1, 3, 5], [2, 4, 0], [3, 5, 1], [4, 0, 2], [5, 1, 3]]
    response = upload(operator_client, [{"id": i, "replicas": spus[i % 6]} for i in range(20_000)])
    html = response.content.decode()
    assert response.status_code == 200 and "Validation passed" in html
    assert len(map_rows(html)) == PREVIEW_ROWS and len(embedded_map(html)["map"]) == 20_000


def test_a_20000_partition_file_with_a_bad_replica_everywhere_lists_200_and_counts_all(
        operator_client, six_spus):
    before = store_counts()
    response = upload(operator_client, [{"id": i, "replicas": [0, 9, 2]} for i in range(20_000)],
                      action="create")
    html = response.content.decode()
    assert response.status_code == 400 and store_counts() == before
    assert "breaks 20000 rules" in html
    assert html.count('data-rule="spu-exists"') == PROBLEMS_SHOWN
    assert f"{20_000 - PROBLEMS_SHOWN} more" in html


def test_a_topic_longer_than_a_page_offers_its_map_as_a_file(operator_client, six_spus):
    from cluster.services import topic_create
    topic_create(name="wide", partitions=500, replication=3)
    html = operator_client.get("/topics/wide/").content.decode()
    assert 'class="file"' not in html and "/topics/wide/assignment.json" in html
    file = operator_client.get("/topics/wide/assignment.json")
    assert file["Content-Disposition"] == 'attachment; filename="wide-assignment.json"'
    assert len(json.loads(file.content)["partitions"]) == 500
