"""Modify, unregister and scale down SPUs without stranding replicas (issue 12, 003's Modify SPU)."""
from __future__ import annotations

import json

import pytest

from cluster.models import Event, Spu, SpuGroup, Topic
from cluster.services import spg_create, topic_create
from tests.helpers import refused, register_spus, run, store_counts

pytestmark = pytest.mark.django_db


@pytest.fixture
def hosted(db):
    """SPUs 0-2 hold topic t (replication 3); SPU 3, registered later, holds nothing."""
    register_spus(0, 1, 2)
    topic_create(name="t", partitions=4, replication=3)
    register_spus(3)
    return 1


def test_unregistering_an_spu_that_holds_replicas_is_refused_naming_the_topic(hosted):
    before = store_counts()
    error = refused("spu", "unregister", str(hosted))
    assert "topic t" in str(error) and "--force" in str(error)
    assert store_counts() == before


def test_unregistering_an_empty_spu_needs_no_force(hosted):
    run("spu", "unregister", "--id", "3")
    assert not Spu.objects.filter(pk=3).exists()


def test_force_unregisters_and_the_log_says_it_was_forced(hosted):
    run("spu", "unregister", str(hosted), "--force")
    assert not Spu.objects.filter(pk=hosted).exists()
    assert Event.objects.get(operation="unregister", object_name=str(hosted)).params == \
        {"forced": True}


def test_the_api_answers_409_with_the_topics_and_force_true_unregisters(api, hosted):
    response = api.delete(f"/api/spus/{hosted}/")
    assert response.status_code == 409
    assert response.json()["details"] == {"topics": ["t"]}
    assert api.delete(f"/api/spus/{hosted}/?force=true").status_code == 204


def test_spu_update_changes_the_rack_and_endpoints_and_logs_what_changed(db):
    register_spus(5, rack="rack-a")
    out = json.loads(run("spu", "update", "5", "--rack", "rack-b", "--public", "h5:9105",
                         "--json"))
    assert (out["rack"], out["public"]) == ("rack-b", "h5:9105")
    assert Event.objects.get(operation="update").params == {
        "rack": {"from": "rack-a", "to": "rack-b"},
        "public_endpoint": {"from": "localhost:9005", "to": "h5:9105"}}


def test_spu_update_refuses_a_bad_endpoint_and_changes_nothing(db):
    register_spus(5, rack="rack-a")
    refused("spu", "update", "5", "--public", "no-port")
    assert Spu.objects.get(pk=5).public_endpoint == "localhost:9005"
    assert not Event.objects.filter(operation="update").exists()


def test_a_viewer_cannot_update_an_spu(viewer, db):
    from rest_framework.test import APIClient

    register_spus(5, rack="rack-a")
    client = APIClient()
    client.force_authenticate(viewer)
    assert client.patch("/api/spus/5/", {"rack": "rack-z"}, format="json").status_code == 403
    assert Spu.objects.get(pk=5).rack == "rack-a"


def test_an_operator_updates_an_spu_over_the_api(api, db):
    register_spus(5, rack="rack-a")
    response = api.patch("/api/spus/5/", {"rack": "rack-c"}, format="json")
    assert response.status_code == 200 and response.json()["rack"] == "rack-c"


def test_a_topic_refused_for_mixed_racks_is_provisioned_once_every_spu_has_a_rack(db):
    register_spus(0, 1, rack="rack-a")
    topic_create(name="mixed", partitions=2, replication=3)  # waits for a third SPU
    register_spus(2)  # the third comes without a rack: the cluster now mixes
    assert Topic.objects.get(name="mixed").resolution == "InvalidConfig"
    run("spu", "update", "2", "--rack", "rack-b")
    topic = Topic.objects.get(name="mixed")
    assert topic.resolution == "Provisioned" and topic.partition_set.count() == 2


def test_scaling_a_group_down_over_spus_that_hold_replicas_is_refused(db):
    spg_create(name="g", replicas=3, min_id=10)
    topic_create(name="t", partitions=3, replication=3)
    error = refused("spg", "scale", "g", "--replicas", "1")
    assert "SPU 11" in str(error) and "SPU 12" in str(error)
    assert SpuGroup.objects.get(name="g").replicas == 3
    run("spg", "scale", "g", "--replicas", "1", "--force")
    assert sorted(Spu.objects.values_list("id", flat=True)) == [10]
