"""Every input bounded where it enters: one record limit for the CLI, API and form;
integers and lengths checked before the store (SQLite or PostgreSQL) sees them."""
from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.core.files.uploadedfile import SimpleUploadedFile

from cluster.models import Spu, Topic
from tests.helpers import refused, register_spus, run, store_counts

pytestmark = [pytest.mark.django_db]

TOO_DEEP = "[" * 5000 + "]" * 5000


@pytest.fixture
def topic(redis_url):
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "--partitions", "1", "--replication", "3")
    return "t"


def leo(topic: str) -> int:
    return json.loads(run("partition", "list", "--topic", topic, "--json"))[0]["leo"]


def test_the_default_record_limit_is_100000():
    assert settings.PRODUCE_MAX_RECORDS == 100_000


def test_produce_past_the_limit_exits_2_and_appends_nothing(topic):
    error = refused("produce", topic, "--count", "100001")
    assert "at most 100,000 records" in str(error) and leo(topic) == 0


def test_produce_past_the_limit_over_the_api_is_a_400_json(topic, operator_client):
    response = operator_client.post("/api/topics/t/produce/", {"count": 100_001},
                                    content_type="application/json")
    assert response.status_code == 400 and "100000" in response.json()["error"]
    assert leo(topic) == 0


def test_the_service_applies_the_setting_to_every_shell(topic, operator_client, settings):
    settings.PRODUCE_MAX_RECORDS = 5
    refused("produce", topic, "--count", "6")
    response = operator_client.post("/api/topics/t/produce/", {"count": 6},
                                    content_type="application/json")
    assert response.status_code == 400 and "at most 5 records" in response.json()["error"]
    assert "record(s)" in run("produce", topic, "--count", "5")


def test_the_produce_form_refuses_past_the_limit_next_to_the_field(topic, operator_client,
                                                                    settings):
    settings.PRODUCE_MAX_RECORDS = 20
    response = operator_client.post("/topics/t/produce/",
                                    {"partition": 0, "count": 21, "acks": "1"})
    assert response.status_code == 400
    assert "less than or equal to 20" in response.context["produce_form"].errors["count"][0]
    assert leo(topic) == 0


def test_the_form_accepts_more_than_the_old_browser_cap_of_10000(topic):
    from cluster.forms import ProduceForm

    assert ProduceForm({"partition": 0, "count": 50_000, "acks": "1"}).is_valid()


@pytest.mark.parametrize("query", ["max=100000000000000000000", "max=0", "max=-1",
                                   "offset=-1", "offset=18446744073709551616",
                                   "partition=99999999999999999999", "uncommitted=maybe"])
def test_records_query_parameters_out_of_range_are_400_json(topic, operator_client, query):
    response = operator_client.get(f"/api/topics/t/records/?{query}")
    assert response.status_code == 400 and response.json()["error"].startswith("invalid input")


@pytest.mark.parametrize("value", ["-1", "0", "100001"])
def test_consume_max_out_of_range_exits_2(topic, value):
    assert "max must be between 1 and 100,000" in str(refused("consume", topic, "--max", value))


def test_the_records_limits_are_in_the_openapi_schema(operator_client):
    schema = operator_client.get("/api/schema/?format=json").json()
    params = {p["name"]: p["schema"] for p in
              schema["paths"]["/api/topics/{name}/records/"]["get"]["parameters"]}
    assert params["max"]["maximum"] == 100_000 and params["max"]["minimum"] == 1
    assert params["offset"]["maximum"] == 2**63 - 1
    produce = schema["components"]["schemas"]["Produce"]["properties"]["count"]
    assert produce["maximum"] == 100_000
    create = schema["components"]["schemas"]["TopicCreate"]["properties"]
    assert create["max_lag"]["maximum"] == 2**31 - 1
    assert schema["components"]["schemas"]["SpuRegister"]["properties"]["public"][
        "maxLength"] == 255


@pytest.mark.parametrize("max_lag", ["2147483648", "9223372036854775808"])
def test_a_max_lag_bigger_than_the_column_exits_2_and_stores_nothing(db, max_lag):
    register_spus(0)
    before = store_counts()
    error = refused("topic", "create", "big", "-p", "1", "-r", "1", "--max-lag", max_lag)
    assert "max lag must be between 1 and 2,147,483,647" in str(error)
    assert store_counts() == before


@pytest.mark.parametrize("max_lag", [2**31, 2**63])
def test_a_max_lag_bigger_than_the_column_is_a_400_over_the_api(api, db, max_lag):
    register_spus(0)
    response = api.post("/api/topics/", {"name": "big", "partition_count": 1,
                                         "replication": 1, "max_lag": max_lag}, format="json")
    assert response.status_code == 400 and "max_lag" in response.json()["error"]
    assert not Topic.objects.exists()


def test_the_topic_form_refuses_a_max_lag_bigger_than_the_column(operator_client):
    register_spus(0)
    response = operator_client.post("/new-topic/", {"name": "big", "partitions": 1,
                                                    "replication": 1, "min_lrs": 1,
                                                    "max_lag": 2**63, "action": "create"})
    assert "max_lag" in response.context["form"].errors and not Topic.objects.exists()


def test_an_spu_endpoint_longer_than_255_characters_is_refused_everywhere(api, db):
    host = "h" * 300 + ":9005"
    response = api.post("/api/spus/", {"id": 1, "public": host}, format="json")
    assert response.status_code == 400 and "public" in response.json()["error"]
    error = refused("spu", "register", "--id", "1", "--public", host)
    assert "at most 255" in str(error) and not Spu.objects.exists()


def test_a_body_nested_5000_deep_is_a_400_json(api, db):
    response = api.generic("POST", "/api/topics/", TOO_DEEP, content_type="application/json")
    assert response.status_code == 400 and "nested too deeply" in response.json()["error"]


def test_an_uploaded_file_nested_5000_deep_is_a_400_json(api, db):
    upload = SimpleUploadedFile("map.json", TOO_DEEP.encode())
    response = api.post("/api/topics/", {"name": "deep", "file": upload}, format="multipart")
    assert response.status_code == 400 and "nested too deeply" in response.json()["error"]


def test_a_page_upload_nested_5000_deep_shows_the_reason(operator_client):
    upload = SimpleUploadedFile("map.json", TOO_DEEP.encode())
    response = operator_client.post("/new-topic/upload/", {"name": "deep", "file": upload,
                                                           "action": "validate"})
    assert response.status_code == 400 and b"nested too deeply" in response.content


def test_an_oversized_body_on_the_topics_api_is_413_in_words(api, db):
    body = json.dumps({"name": "big", "replica_assignment": "x" * (6 * 1024 * 1024)})
    response = api.generic("POST", "/api/topics/", body, content_type="application/json")
    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "error": "the request body is too large: this server reads at most 2 MiB (2097152 bytes)",
        "details": {"limit_bytes": 2097152}}
