"""Errors people can read: words instead of Python values, the exit code the README
promises, and a stale tab's button that lands somewhere useful after signing in again."""
from __future__ import annotations

from urllib.parse import urlparse

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from cluster.models import Spu, Topic
from tests.helpers import refused, register_spus, run

pytestmark = [pytest.mark.django_db]


def test_a_nested_field_error_is_said_in_words(api, redis_url):
    register_spus(0, online=True)
    run("topic", "create", "t", "-p", "1", "-r", "1")
    response = api.post("/api/topics/t/produce/", {"values": ["x" * 70_000]}, format="json")
    error = response.json()["error"]
    assert response.status_code == 400 and "ErrorDetail" not in error
    assert error == "invalid input: values.0: Ensure this field has no more than 65536 characters."


def test_a_file_with_a_boolean_replica_is_refused_in_words(api):
    register_spus(0, 3, 6)
    upload = SimpleUploadedFile("map.json", b'[{"id": 0, "replicas": [true, 3, 6]}]')
    response = api.post("/api/topics/", {"name": "t", "file": upload}, format="multipart")
    error = response.json()["error"]
    assert response.status_code == 400 and "True" not in error and "[" not in error
    assert "replica 0 is true/false, expected an SPU id" in error


def test_a_duplicate_id_in_a_file_is_named_a_duplicate(api):
    register_spus(0, 1)
    body = {"name": "t", "replica_assignment": [{"id": 0, "replicas": [0]},
                                                {"id": 0, "replicas": [1]}]}
    response = api.post("/api/topics/", body, format="json")
    assert response.status_code == 400 and "id 0 is a duplicate" in response.json()["error"]
    assert [d["rule"] for d in response.json()["details"]] == ["duplicate-id"]


def test_an_unknown_key_in_a_file_entry_is_refused_and_stores_nothing(api):
    register_spus(0)
    body = {"name": "t", "replica_assignment": [{"id": 0, "replicas": [0], "lead": 0}]}
    response = api.post("/api/topics/", body, format="json")
    assert response.status_code == 400 and 'unknown key "lead"' in response.json()["error"]
    assert not Topic.objects.exists()


def test_consuming_an_offline_partition_exits_1_with_the_reason(redis_url):
    register_spus(0, online=True)
    run("topic", "create", "solo", "-p", "1", "-r", "1")
    run("spu", "offline", "0")
    error = refused("consume", "solo", code=1)
    assert "no leader" in str(error)


def test_a_stale_outage_button_after_signing_in_again_lands_on_its_page(operator):
    register_spus(0, online=True)
    client = Client()
    response = client.post("/spus/0/offline/?next=/topics/")
    login = response["Location"]
    assert response.status_code == 302 and urlparse(login).path == "/login/"
    response = client.post(login, {"username": "op", "password": "op-pass-123"})
    response = client.get(response["Location"])
    assert response.status_code == 302 and response["Location"] == "/topics/"
    assert Spu.objects.get(pk=0).resolution == "Online"


def test_outage_buttons_carry_their_page_in_the_action(operator_client):
    register_spus(0, online=True)
    page = operator_client.get("/spus/").content.decode()
    assert 'action="/spus/0/offline/?next=/spus/"' in page
