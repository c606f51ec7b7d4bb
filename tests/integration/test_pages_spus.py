"""The SPU page: register, unregister, SPU groups; inline errors; skew and preferred share."""
from __future__ import annotations

import re

import pytest

from cluster.models import Event, Spu, SpuGroup
from tests.helpers import register_spus, store_counts


def test_register_a_custom_spu_logs_the_user(operator_client, db):
    response = operator_client.post("/spus/register/", {"id": 7, "rack": "rack-a"})
    assert response.status_code == 302
    assert Spu.objects.get(pk=7).rack == "rack-a"
    assert Event.objects.filter(actor="op", object_name="7", operation="register").exists()


@pytest.mark.parametrize("data, field, text", [
    ({"id": 0}, "id", "already registered"),
    ({"id": 5, "rack": "bad rack!"}, "rack", "must be 1-63 letters"),
    ({"id": 5, "public": "nohost"}, "public", "HOST:PORT"),
    ({"id": -1}, "id", "greater than or equal to 0"),
])
def test_register_errors_show_next_to_their_field(operator_client, db, data, field, text):
    register_spus(0)
    before = store_counts()
    response = operator_client.post("/spus/register/", data)
    assert response.status_code == 400
    error = re.search(rf'id="id_{field}-error">(.*?)</p>', response.content.decode())
    assert error and text in error.group(1)
    assert store_counts() == before


def test_unregister_removes_a_custom_spu(operator_client, db):
    register_spus(3)
    assert operator_client.post("/spus/3/unregister/").status_code == 302
    assert not Spu.objects.exists()


def test_unregistering_a_managed_spu_is_refused_with_the_reason(operator_client, db):
    from cluster.services import spg_create
    spg_create(name="main", replicas=2, min_id=10)
    response = operator_client.post("/spus/10/unregister/")
    assert response.status_code == 400 and b"scale or delete the group" in response.content
    assert Spu.objects.count() == 2


def test_group_create_scale_and_delete(operator_client, db):
    response = operator_client.post("/spu-groups/create/", {
        "name": "main", "replicas": 3, "min_id": 100, "rack": "", "storage_size": "2Gi"})
    assert response.status_code == 302
    assert sorted(Spu.objects.values_list("id", flat=True)) == [100, 101, 102]
    assert operator_client.post("/spu-groups/main/scale/", {"replicas": 1}).status_code == 302
    assert list(Spu.objects.values_list("id", flat=True)) == [100]
    assert operator_client.post("/spu-groups/main/delete/").status_code == 302
    assert not SpuGroup.objects.exists() and not Spu.objects.exists()
    assert Event.objects.filter(actor="op", object_type="spu-group").count() == 3


def test_group_errors_are_inline_and_store_nothing(operator_client, db):
    register_spus(5)
    before = store_counts()
    response = operator_client.post("/spu-groups/create/", {
        "name": "Bad Name", "replicas": 2, "storage_size": "1Gi"})
    assert response.status_code == 400 and b"lowercase" in response.content
    response = operator_client.post("/spu-groups/none/scale/", {"replicas": 2})
    assert response.status_code == 400 and b"not found" in response.content
    assert store_counts() == before


def test_scaling_into_used_ids_is_refused_next_to_the_group(operator_client, db):
    from cluster.services import spg_create
    spg_create(name="main", replicas=1, min_id=0)
    register_spus(1)
    response = operator_client.post("/spu-groups/main/scale/", {"replicas": 2})
    assert response.status_code == 400 and b"already in use" in response.content
    assert SpuGroup.objects.get().replicas == 1


def test_the_spu_table_shows_skew_and_preferred_share(operator_client, db):
    from cluster.services import topic_create
    register_spus(0, 1, 2, online=True)
    topic_create(name="t", partitions=4, replication=2)  # leaders 0,1,2,0: SPU 0 leads 2
    html = operator_client.get("/spus/").content.decode()
    row0 = re.search(r'<tr data-spu="0"[^>]*>(.*?)</tr>', html, re.S).group(1)
    # 2 vs avg 4/3, but 4 leaders on 3 SPUs cannot be spread more evenly than 1-2.
    assert "+50%" in row0 and "skew-bad" not in row0 and "skew-ok" in row0
    assert "100%" in row0                                  # leads both partitions it prefers


def test_the_spu_list_filters_by_resolution(operator_client, db):
    register_spus(0, online=True)
    register_spus(1)
    html = operator_client.get("/spus/?resolution=Init").content.decode()
    assert 'data-spu="1"' in html and 'data-spu="0"' not in html


def test_viewers_see_no_forms_and_cannot_post(viewer_client, db):
    register_spus(3)
    html = viewer_client.get("/spus/").content.decode()
    assert "Register a custom SPU" not in html and "Unregister" not in html
    for url, data in [("/spus/register/", {"id": 9}), ("/spus/3/unregister/", {}),
                      ("/spu-groups/create/", {"name": "g", "replicas": 1}),
                      ("/spu-groups/g/scale/", {"replicas": 2}), ("/spu-groups/g/delete/", {})]:
        assert viewer_client.post(url, data).status_code == 403
    assert list(Spu.objects.values_list("id", flat=True)) == [3]
