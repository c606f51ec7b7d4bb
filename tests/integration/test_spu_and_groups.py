"""SPUs and SPU groups through the services, and the connection manager."""
import pytest

from cluster.errors import Conflict, InvalidInput, NotFound
from cluster.models import Event, Spu, SpuGroup
from cluster.services import (spg_create, spg_delete, spg_reconcile_invalid, spg_scale,
                              spu_connect, spu_register, spu_unregister)
from tests.helpers import register_spus, store_counts

pytestmark = pytest.mark.django_db


def test_a_registered_custom_spu_starts_in_init_with_its_endpoints():
    spu = spu_register(spu_id=7, rack="rack-a", public="spu7:9005", private="spu7:9006")
    assert (spu.spu_type, spu.resolution, spu.public_endpoint) == ("custom", "Init", "spu7:9005")


def test_spu_ids_are_globally_unique():
    register_spus(1)
    with pytest.raises(Conflict):
        spu_register(spu_id=1)


@pytest.mark.parametrize("kwargs,field", [
    ({"spu_id": 1, "public": "nohost"}, "public"),
    ({"spu_id": 1, "private": "h:99999"}, "private"),
    ({"spu_id": 1, "rack": "bad rack"}, "rack"),
])
def test_bad_spu_input_names_the_field_and_stores_nothing(kwargs, field):
    with pytest.raises(InvalidInput) as refused:
        spu_register(**kwargs)
    assert refused.value.field == field and not Spu.objects.exists()


def test_an_unregistered_spu_is_refused_by_the_connection_manager():
    with pytest.raises(NotFound, match="not registered"):
        spu_connect(spu_id=42)
    assert Event.objects.filter(operation="connect-refused", object_name="42").exists()


def test_a_registered_spu_that_connects_goes_online():
    register_spus(3)
    assert spu_connect(spu_id=3).resolution == "Online"


def test_a_group_provisions_managed_spus_in_its_id_range():
    group = spg_create(name="main", replicas=3, min_id=11, rack="rack-x")
    spus = list(Spu.objects.filter(group=group).values_list("id", "spu_type", "rack"))
    assert group.resolution == "Reserved"
    assert spus == [(11, "managed", "rack-x"), (12, "managed", "rack-x"),
                    (13, "managed", "rack-x")]
    assert group.storage_size == "1Gi"


def test_scaling_a_group_down_terminates_the_highest_ids():
    spg_create(name="main", replicas=4, min_id=0)
    spg_scale(name="main", replicas=2)
    assert list(Spu.objects.values_list("id", flat=True)) == [0, 1]


def test_scaling_a_group_up_provisions_new_ids():
    spg_create(name="main", replicas=1, min_id=5)
    spg_scale(name="main", replicas=3)
    assert list(Spu.objects.values_list("id", flat=True)) == [5, 6, 7]


def test_a_group_colliding_with_existing_spus_is_stored_invalid_with_a_reason():
    register_spus(2)
    group = spg_create(name="main", replicas=3, min_id=1)
    assert group.resolution == "Invalid" and "SPU id 2 already in use" in group.reason
    assert list(Spu.objects.values_list("id", flat=True)) == [2]


def test_an_invalid_group_is_reserved_once_its_range_is_free():
    register_spus(2)
    spg_create(name="main", replicas=3, min_id=1)
    spu_unregister(spu_id=2)
    assert spg_reconcile_invalid() == ["main"]
    assert SpuGroup.objects.get().resolution == "Reserved"


def test_scaling_into_a_collision_is_refused_and_changes_nothing():
    spg_create(name="main", replicas=1, min_id=0)
    register_spus(2)
    before = store_counts()
    with pytest.raises(Conflict, match="already in use"):
        spg_scale(name="main", replicas=3)
    assert store_counts() == before and SpuGroup.objects.get().replicas == 1


def test_a_managed_spu_cannot_be_unregistered_on_its_own():
    spg_create(name="main", replicas=1, min_id=0)
    with pytest.raises(Conflict, match="managed by SPU group"):
        spu_unregister(spu_id=0)


def test_deleting_a_group_removes_its_spus():
    spg_create(name="main", replicas=2, min_id=0)
    spg_delete(name="main")
    assert not Spu.objects.exists()


@pytest.mark.parametrize("kwargs", [
    {"name": "Bad", "replicas": 1}, {"name": "g", "replicas": 0},
    {"name": "g", "replicas": 1, "storage_size": "lots"}, {"name": "g", "replicas": 1, "min_id": -1},
])
def test_bad_group_input_stores_nothing(kwargs):
    with pytest.raises(InvalidInput):
        spg_create(**kwargs)
    assert not SpuGroup.objects.exists() and not Spu.objects.exists()


def test_a_group_provisions_waiting_topics():
    from cluster.services import topic_create

    topic_create(name="t", partitions=1, replication=2)
    spg_create(name="main", replicas=2, min_id=0)
    from cluster.models import Topic
    assert Topic.objects.get().resolution == "Provisioned"
