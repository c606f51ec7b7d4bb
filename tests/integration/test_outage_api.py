"""Outage and record endpoints: operators act, viewers get 403 JSON, errors are 4xx JSON."""
from __future__ import annotations

import pytest
from django.test import Client

from cluster.models import Partition, Spu
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]

@pytest.fixture(autouse=True)
def mounted(redis_url):
    for rack, ids in (("rack-a", (0, 1)), ("rack-b", (2, 3))):
        register_spus(*ids, rack=rack, online=True)
    from cluster.services import topic_create

    topic_create(name="t", partitions=2, replication=3, min_lrs=2)


def test_an_operator_takes_an_spu_offline_and_the_elections_finish(operator_client):
    led = Partition.objects.filter(leader=0).count()
    response = operator_client.post("/api/spus/0/offline/")
    assert response.status_code == 200
    assert response.json() == {"spus": [0], "resolution": "Offline", "settled": True,
                               "elections": {"touched": led, "elected": led, "offline": 0,
                                             "pending": 0}}
    assert Spu.objects.get(pk=0).resolution == "Offline"
    assert operator_client.post("/api/spus/0/online/").json()["resolution"] == "Online"


def test_an_operator_takes_a_rack_offline_and_back(operator_client):
    assert operator_client.post("/api/racks/rack-a/offline/").json()["spus"] == [0, 1]
    assert set(Spu.objects.filter(rack="rack-a").values_list("resolution", flat=True)) == \
        {"Offline"}
    assert operator_client.post("/api/racks/rack-a/online/").status_code == 200


@pytest.mark.parametrize("url", ["/api/spus/0/offline/", "/api/spus/0/online/",
                                 "/api/spus/0/kill/", "/api/racks/rack-a/offline/",
                                 "/api/racks/rack-a/online/", "/api/topics/t/produce/"])
def test_a_viewer_is_refused_with_403_json(viewer_client, url):
    response = viewer_client.post(url, {"count": 1}, content_type="application/json")
    assert response.status_code == 403 and "error" in response.json()
    assert Spu.objects.get(pk=0).resolution == "Online"


def test_unknown_spu_and_rack_are_404_with_an_error_body(operator_client):
    for url in ("/api/spus/9/offline/", "/api/racks/nowhere/offline/"):
        response = operator_client.post(url)
        assert response.status_code == 404
        assert set(response.json()) >= {"error", "details"}


def test_produce_then_a_viewer_reads_the_committed_records(operator_client, viewer):
    response = operator_client.post("/api/topics/t/produce/",
                                    {"values": ["a", "b"], "acks": "all"},
                                    content_type="application/json")
    assert response.status_code == 200 and response.json()["state"] == "acknowledged"
    reader = Client()
    reader.force_login(viewer)
    assert reader.get("/api/topics/t/records/").json() == \
        [{"offset": 0, "value": "a"}, {"offset": 1, "value": "b"}]


def test_a_refused_write_is_409_with_the_reason(operator_client):
    operator_client.post("/api/racks/rack-a/offline/")
    operator_client.post("/api/spus/2/offline/")
    response = operator_client.post("/api/topics/t/produce/", {"count": 1, "acks": "all"},
                                    content_type="application/json")
    assert response.status_code == 409 and "NOT_ENOUGH_REPLICAS" in str(response.json())


def test_bad_produce_input_is_400(operator_client):
    response = operator_client.post("/api/topics/t/produce/", {"count": 1, "values": ["x"]},
                                    content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"].startswith("invalid input: ")
    assert operator_client.get("/api/topics/t/records/?partition=x").status_code == 400
