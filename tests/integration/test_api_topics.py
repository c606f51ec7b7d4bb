"""POST/GET/DELETE /api/topics/: the describe --json shape, dry runs, files, errors."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from cluster.models import Event, Topic
from tests.helpers import register_spus, store_counts

DESCRIBE_KEYS = {"name", "resolution", "reason", "partitions", "partition_count", "replication",
                 "ignore_rack_assignment", "min_lrs", "max_lag", "unclean_leader_election", "manual"}


@pytest.fixture
def five_spus(db):
    register_spus(0, 1, 2, 3, 4)


def test_create_answers_201_in_the_describe_shape(api, five_spus):
    response = api.post("/api/topics/", {"name": "orders", "partition_count": 15,
                                         "replication": 3}, format="json")
    assert response.status_code == 201
    body = response.json()
    assert set(body) == DESCRIBE_KEYS
    assert body["partitions"][9] == {"id": 9, "replicas": [4, 1, 2]}
    assert api.get("/api/topics/orders/").json() == body
    assert Event.objects.filter(actor="op", operation="create").exists()


def test_a_dry_run_answers_200_and_stores_nothing(api, five_spus):
    before = store_counts()
    response = api.post("/api/topics/", {"name": "orders", "partition_count": 2,
                                         "replication": 2, "dry_run": True}, format="json")
    assert response.status_code == 200
    assert response.json()["partitions"] == [{"id": 0, "replicas": [0, 1]},
                                             {"id": 1, "replicas": [1, 2]}]
    assert store_counts() == before


@pytest.mark.parametrize("assignment", [
    {"partitions": [{"id": 0, "replicas": [2, 0]}]},
    [{"id": 0, "replicas": [2, 0]}],
])
def test_create_from_either_file_shape_in_json(api, five_spus, assignment):
    response = api.post("/api/topics/", {"name": "manual", "replica_assignment": assignment},
                        format="json")
    assert response.status_code == 201
    assert response.json()["partitions"] == [{"id": 0, "replicas": [2, 0]}]
    assert response.json()["manual"] is True


def test_a_multipart_upload_validates_only(api, five_spus):
    before = store_counts()
    upload = SimpleUploadedFile("map.json", json.dumps([{"id": 0, "replicas": [1]}]).encode())
    response = api.post("/api/topics/", {"name": "up", "file": upload, "dry_run": "true"},
                        format="multipart")
    assert response.status_code == 200 and response.json()["partitions"][0]["replicas"] == [1]
    assert store_counts() == before


def test_a_multipart_upload_creates(api, five_spus):
    upload = SimpleUploadedFile("map.json", b'{"partitions": [{"id": 0, "replicas": [3, 4]}]}')
    response = api.post("/api/topics/", {"name": "up", "file": upload}, format="multipart")
    assert response.status_code == 201 and Topic.objects.get(name="up").replica_map == [[3, 4]]


def test_too_few_spus_store_insufficient_resources_with_the_reason(api, db):
    register_spus(0)
    response = api.post("/api/topics/", {"name": "t", "partition_count": 1, "replication": 3},
                        format="json")
    assert response.status_code == 201
    assert response.json()["resolution"] == "InsufficientResources"
    assert "need 2 more SPUs" in response.json()["reason"]


@pytest.mark.parametrize("body, status, text", [
    ({"name": "Bad", "partition_count": 1, "replication": 1}, 400, "lowercase"),
    ({"name": "t"}, 400, "required"),
    ({"name": "t", "partition_count": "x", "replication": 1}, 400, "invalid input"),
    ({"name": "t", "replica_assignment": [{"id": 1, "replicas": [0]}]}, 400, "partition 0"),
    ({"name": "t", "replica_assignment": [{"id": 0, "replicas": [9]}]}, 400, "SPU 9"),
])
def test_errors_are_4xx_json_and_store_nothing(api, five_spus, body, status, text):
    before = store_counts()
    response = api.post("/api/topics/", body, format="json")
    assert response.status_code == status
    payload = response.json()
    assert set(payload) >= {"error", "details"} and text in json.dumps(payload)
    assert store_counts() == before


def test_file_rule_errors_list_partition_and_rule(api, five_spus):
    response = api.post("/api/topics/", {"name": "t", "replica_assignment": [
        {"id": 0, "replicas": [0, 1]}, {"id": 1, "replicas": [1, 1]}]}, format="json")
    assert {"partition": 1, "rule": "unique"}.items() <= response.json()["details"][0].items()


def test_a_duplicate_is_409(api, five_spus):
    body = {"name": "t", "partition_count": 1, "replication": 1}
    api.post("/api/topics/", body, format="json")
    response = api.post("/api/topics/", body, format="json")
    assert response.status_code == 409 and "already exists" in response.json()["error"]


def test_an_oversized_upload_is_refused(api, five_spus):
    upload = SimpleUploadedFile("map.json", b"[" + b" " * (1024 * 1024) + b"]")
    response = api.post("/api/topics/", {"name": "t", "file": upload}, format="multipart")
    assert response.status_code == 400 and "1 MiB" in response.json()["error"]


def test_delete(api, five_spus):
    api.post("/api/topics/", {"name": "t", "partition_count": 1, "replication": 1}, format="json")
    assert api.delete("/api/topics/t/").status_code == 204
    assert api.delete("/api/topics/t/").status_code == 404
    assert not Topic.objects.exists()


def test_the_list_is_paginated_and_filterable(api, five_spus):
    from cluster.services import topic_create
    for i in range(3):
        topic_create(name=f"t{i}", partitions=1, replication=1)
    page = api.get("/api/topics/?limit=2").json()
    assert page["count"] == 3 and len(page["results"]) == 2 and page["next"]
    assert [t["name"] for t in api.get("/api/topics/?search=t2").json()["results"]] == ["t2"]


def test_a_viewer_reads_but_cannot_create_or_delete(viewer, five_spus):
    client = APIClient()
    client.force_authenticate(viewer)
    assert client.get("/api/topics/").status_code == 200
    response = client.post("/api/topics/", {"name": "t", "partition_count": 1,
                                            "replication": 1}, format="json")
    assert response.status_code == 403 and "operator" in response.json()["error"]
    assert not Topic.objects.exists()


@pytest.mark.parametrize("method, url", [("get", "/api/topics/"), ("post", "/api/topics/"),
                                         ("get", "/api/spus/"), ("get", "/api/schema/?format=json"),
                                         ("delete", "/api/topics/x/")])
def test_anonymous_calls_get_json_refusals_not_a_login_redirect(client, db, method, url):
    response = getattr(client, method)(url)
    assert response.status_code in (401, 403)
    assert "json" in response["Content-Type"]
    assert "error" in response.json()


def test_token_authentication_works_without_csrf(operator, five_spus):
    from rest_framework.authtoken.models import Token
    token = Token.objects.create(user=operator)
    client = APIClient(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = client.post("/api/topics/", {"name": "t", "partition_count": 1,
                                            "replication": 1}, format="json")
    assert response.status_code == 201


def test_session_writes_need_the_csrf_token(operator, five_spus):
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(operator)
    response = client.post("/api/topics/", {"name": "t", "partition_count": 1,
                                            "replication": 1}, format="json")
    assert response.status_code == 403 and "CSRF" in response.json()["error"]
