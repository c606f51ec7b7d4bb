"""Topic pages: list filters, create with a dry-run preview, upload a replica assignment file."""
from __future__ import annotations

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from cluster.models import Event, Topic
from tests.helpers import register_spus, store_counts


@pytest.fixture
def five_spus(db):
    register_spus(0, 1, 2, 3, 4)


def _create(client, action="preview", **fields):
    data = {"name": "orders", "partitions": 15, "replication": 3, "min_lrs": 1,
            "max_lag": 1000, "action": action, **fields}
    return client.post("/new-topic/", data)


def _upload(client, content, action="validate", name="custom-topic", filename="map.json"):
    upload = SimpleUploadedFile(filename, content if isinstance(content, bytes)
                                else json.dumps(content).encode(), "application/json")
    return client.post("/new-topic/upload/", {"name": name, "file": upload, "action": action})


def _rows(html: bytes) -> list[str]:
    import re
    return re.findall(r'data-replicas="([0-9,]*)"', html.decode())


def test_preview_shows_the_seed_map_and_stores_nothing(operator_client, five_spus):
    before = store_counts()
    response = _create(operator_client)
    assert response.status_code == 200
    assert store_counts() == before
    assert _rows(response.content)[:6] == ["0,1,2", "1,2,3", "2,3,4", "3,4,0", "4,0,1", "0,2,3"]
    assert b"Nothing has been stored yet" in response.content


def test_create_stores_the_previewed_map_and_shows_it_on_the_detail_page(operator_client,
                                                                        five_spus):
    preview = _rows(_create(operator_client).content)
    response = _create(operator_client, action="create", preview_start=0)
    assert response.status_code == 302 and response["Location"] == "/topics/orders/"
    detail = operator_client.get("/topics/orders/")
    assert _rows(detail.content)[:15] == preview[:15]
    assert Topic.objects.get(name="orders").replica_map[0] == [0, 1, 2]
    assert Event.objects.filter(actor="op", operation="create", object_name="orders").exists()


def test_the_page_warns_when_the_chain_moved_between_preview_and_create(operator_client,
                                                                       five_spus):
    from cluster.services import topic_create
    _create(operator_client)
    topic_create(name="other", partitions=2, replication=1)
    response = _create(operator_client, action="create", preview_start=0)
    page = operator_client.get(response["Location"])
    assert b"starts at a later index than previewed" in page.content


def test_too_few_spus_store_insufficient_resources_and_the_page_says_why(operator_client, db):
    register_spus(0)
    preview = _create(operator_client)
    assert b"InsufficientResources" in preview.content and b"need 2 more SPUs" in preview.content
    response = _create(operator_client, action="create")
    detail = operator_client.get(response["Location"])
    assert Topic.objects.get(name="orders").resolution == "InsufficientResources"
    assert b"need 2 more SPUs" in detail.content
    assert b"provisioned automatically" in detail.content


def test_an_invalid_name_shows_next_to_the_name_field_and_stores_nothing(operator_client,
                                                                        five_spus):
    before = store_counts()
    response = _create(operator_client, name="Bad_Name", action="create")
    assert response.status_code == 400
    assert b'id="id_name-error"' in response.content and b"lowercase" in response.content
    assert store_counts() == before


def test_a_duplicate_name_is_refused_inline(operator_client, five_spus):
    _create(operator_client, action="create")
    response = _create(operator_client, action="create")
    assert response.status_code == 400 and b"already exists" in response.content


def test_validate_only_accepts_the_object_shape_and_stores_nothing(operator_client, five_spus):
    before = store_counts()
    response = _upload(operator_client, {"partitions": [{"id": 0, "replicas": [0, 1, 2]},
                                                        {"id": 1, "replicas": [1, 2, 0]}]})
    assert response.status_code == 200
    assert b"Validation passed" in response.content
    assert _rows(response.content)[:2] == ["0,1,2", "1,2,0"]
    assert store_counts() == before


def test_create_from_the_bare_array_shape(operator_client, five_spus):
    response = _upload(operator_client, [{"id": 0, "replicas": [4, 3]}], action="create")
    assert response.status_code == 302
    topic = Topic.objects.get(name="custom-topic")
    assert topic.replica_map == [[4, 3]] and topic.is_manual


@pytest.mark.parametrize("content, partition, rule", [
    ({"partitions": [{"id": 0, "replicas": [0, 1]}, {"id": 2, "replicas": [1, 0]}]},
     "1", "id-sequence"),
    ([{"id": 0, "replicas": [0, 1]}, {"id": 1, "replicas": [1, 1]}], "1", "unique"),
    ([{"id": 0, "replicas": [0, 1]}, {"id": 1, "replicas": [1]}], "1", "same-length"),
    ([{"id": 0, "replicas": []}], "0", "at-least-one"),
    ([{"id": 0, "replicas": [0, -1]}], "0", "non-negative-integers"),
    ([{"id": 0, "replicas": [0, 9]}], "0", "spu-exists"),
    (b"{not json", "whole file", "json"),
])
def test_every_error_names_the_partition_and_the_rule(operator_client, five_spus, content,
                                                      partition, rule):
    before = store_counts()
    response = _upload(operator_client, content, action="create")
    assert response.status_code == 400
    html = response.content.decode()
    assert f'data-rule="{rule}"><td>{partition}</td>' in html
    assert "nothing was stored" in html
    assert store_counts() == before


@pytest.mark.parametrize("content", [[{"id": 0, "replicas": [0, 9]}],
                                     [{"id": 0, "replicas": [1, 1]}], b"{not json"])
def test_the_file_field_points_to_the_problem_listed_once(operator_client, five_spus, content):
    html = _upload(operator_client, content, action="create").content.decode()
    field = html[html.index('id="id_file"'):]
    assert field.index('id="id_file-error"') < field.index("</div>")
    # The field points to the list, where the problem is named once (not twice).
    assert "The file breaks 1 rule: see the list." in field[:field.index("</div>")]
    message = re.search(r'<tr data-rule="[\w-]+"><td>[^<]*</td><td><code>[^<]*</code></td>'
                        r'<td>([^<]*)</td>', html).group(1)
    assert html.count(message) == 1


def test_a_file_over_1_mib_is_refused_before_it_is_parsed(operator_client, five_spus):
    response = _upload(operator_client, b"[" + b" " * (1024 * 1024 + 1) + b"]")
    assert response.status_code == 400 and b"at most 1 MiB" in response.content


def test_the_topic_list_searches_and_filters_by_resolution(operator_client, db):
    from cluster.services import topic_create
    register_spus(0, 1)
    topic_create(name="orders", partitions=2, replication=2)
    topic_create(name="payments", partitions=1, replication=3)
    names = lambda r: set(__import__("re").findall(r'data-topic="([a-z0-9-]+)"', r.content.decode()))  # noqa: E731
    assert names(operator_client.get("/topics/?q=pay")) == {"payments"}
    assert names(operator_client.get("/topics/?resolution=Provisioned")) == {"orders"}
    assert names(operator_client.get("/topics/?resolution=not-provisioned")) == {"payments"}
    assert b"No topic matches" in operator_client.get("/topics/?q=zzz").content


def test_deleting_a_topic_goes_through_the_service_and_is_logged(operator_client, five_spus):
    _create(operator_client, action="create")
    response = operator_client.post("/topics/orders/delete/")
    assert response.status_code == 302
    assert not Topic.objects.exists()
    assert Event.objects.filter(actor="op", operation="delete", object_name="orders").exists()


@pytest.mark.parametrize("url", ["/new-topic/", "/new-topic/upload/"])
def test_a_viewer_cannot_open_the_create_pages(viewer_client, url):
    response = viewer_client.get(url)
    assert response.status_code == 403
    assert b"operator role" in response.content


def test_a_viewer_cannot_create_upload_or_delete(viewer_client, five_spus):
    from cluster.services import topic_create
    topic_create(name="keep", partitions=1, replication=1)
    before = store_counts()
    assert _create(viewer_client, action="create").status_code == 403
    assert _upload(viewer_client, [{"id": 0, "replicas": [0]}], action="create").status_code == 403
    assert viewer_client.post("/topics/keep/delete/").status_code == 403
    assert store_counts() == before
    assert b"+ Topic" not in viewer_client.get("/topics/").content


def test_forms_carry_a_csrf_token(operator_client, five_spus):
    for url in ["/new-topic/", "/new-topic/upload/", "/spus/"]:
        assert b"csrfmiddlewaretoken" in operator_client.get(url).content


def test_a_post_without_the_csrf_token_is_refused(operator, five_spus):
    from django.test import Client
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    response = client.post("/new-topic/", {"name": "orders", "partitions": 1, "replication": 1,
                                           "min_lrs": 1, "max_lag": 1, "action": "create"})
    assert response.status_code == 403
    assert not Topic.objects.exists()
