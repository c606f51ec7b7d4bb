"""SPU, SPU group, partition and event endpoints."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from cluster.models import Spu, SpuGroup
from tests.helpers import recount_partitions, register_spus


def test_register_and_unregister_an_spu(api, db):
    response = api.post("/api/spus/", {"id": 3, "rack": "rack-a"}, format="json")
    assert response.status_code == 201
    assert response.json()["rack"] == "rack-a" and response.json()["type"] == "custom"
    assert api.get("/api/spus/3/").json()["id"] == 3
    assert api.delete("/api/spus/3/").status_code == 204
    assert not Spu.objects.exists()


def test_register_errors_name_the_field(api, db):
    register_spus(3)
    response = api.post("/api/spus/", {"id": 3}, format="json")
    assert response.status_code == 409 and response.json()["field"] == "id"
    response = api.post("/api/spus/", {"id": 4, "public": "nope"}, format="json")
    assert response.status_code == 400 and response.json()["field"] == "public"


def test_spu_group_create_scale_delete(api, db):
    response = api.post("/api/spu-groups/", {"name": "main", "replicas": 2, "min_id": 10},
                        format="json")
    assert response.status_code == 201 and response.json()["spus"] == [10, 11]
    response = api.patch("/api/spu-groups/main/", {"replicas": 3}, format="json")
    assert response.status_code == 200 and response.json()["spus"] == [10, 11, 12]
    assert api.get("/api/spu-groups/").json()["results"][0]["name"] == "main"
    assert api.delete("/api/spu-groups/main/").status_code == 204
    assert not SpuGroup.objects.exists()


def test_spus_list_carries_counts_and_skew(api, db):
    from cluster.services import topic_create
    register_spus(0, 1, online=True)
    topic_create(name="t", partitions=3, replication=2)
    rows = {r["id"]: r for r in api.get("/api/spus/").json()["results"]}
    assert rows[0]["leaders"] == 2 and rows[1]["leaders"] == 1
    assert rows[0]["leader_skew"] == pytest.approx(2 / 1.5 - 1)
    assert rows[0]["preferred_leader_share"] == 1.0


def test_partitions_filter_by_topic_spu_and_health(api, db):
    from cluster.models import Partition
    from cluster.services import topic_create
    register_spus(0, 1, 2, online=True)
    topic_create(name="t", partitions=3, replication=2)
    Partition.objects.filter(index=1).update(leader=None, lrs=[])
    recount_partitions()
    body = api.get("/api/partitions/?topic=t").json()
    assert body["count"] == 3 and body["results"][0]["preferred_leader"] == 0
    assert [p["partition"] for p in api.get("/api/partitions/?leaderless=1").json()["results"]] == [1]
    assert api.get("/api/partitions/?under_replicated=true").json()["count"] == 1
    assert api.get("/api/partitions/?spu=0").json()["count"] == 2
    assert api.get("/api/partitions/?spu=x").status_code == 400


def test_events_are_paginated_and_filterable(api, db):
    api.post("/api/spus/", {"id": 1}, format="json")
    body = api.get("/api/events/?actor=op").json()
    assert body["count"] == 1 and body["results"][0]["operation"] == "register"
    assert body["results"][0]["params"]["public"] == "localhost:9005"


def test_viewers_cannot_mutate_spus_or_groups(viewer, db):
    register_spus(3)
    client = APIClient()
    client.force_authenticate(viewer)
    assert client.get("/api/spus/").status_code == 200
    for method, url, body in [("post", "/api/spus/", {"id": 9}), ("delete", "/api/spus/3/", None),
                              ("post", "/api/spu-groups/", {"name": "g", "replicas": 1}),
                              ("patch", "/api/spu-groups/g/", {"replicas": 2}),
                              ("delete", "/api/spu-groups/g/", None)]:
        assert getattr(client, method)(url, body, format="json").status_code == 403
    assert list(Spu.objects.values_list("id", flat=True)) == [3]
