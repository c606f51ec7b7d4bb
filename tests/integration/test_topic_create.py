"""topic_create through the service: computed, manual, dry run, refusals."""
import pytest

from cluster.errors import Conflict, InvalidInput
from cluster.models import ClusterState, Event, Partition, Topic
from cluster.services import spu_register, topic_create
from tests.helpers import register_spus, store_counts
from tests.seeds import seed_table

pytestmark = pytest.mark.django_db


def test_a_computed_topic_is_provisioned_with_one_partition_per_map_row():
    register_spus(0, 1, 2, 3, 4)
    outcome = topic_create(name="orders", partitions=15, replication=3)
    assert outcome.resolution == "Provisioned"
    assert outcome.replica_map == seed_table("seed_000_cra_5spus")["index_table"][:15]
    rows = list(Partition.objects.filter(topic__name="orders").values_list("index", "replicas"))
    assert rows == list(enumerate(outcome.replica_map))


def test_partitions_record_their_initial_leader_as_the_first_replica():
    register_spus(0, 1, 2)
    topic_create(name="orders", partitions=3, replication=2)
    assert [(p.replicas[0], p.initial_leader) for p in Partition.objects.all()] == \
        [(0, 0), (1, 1), (2, 2)]


def test_the_next_topic_starts_where_the_last_one_ended():
    register_spus(0, 1, 2, 3, 4)
    topic_create(name="first", partitions=9, replication=3)
    second = topic_create(name="second", partitions=1, replication=3)
    assert second.replica_map == [[4, 1, 2]] and second.start_index == 9
    assert ClusterState.objects.get().assignment_cursor == 10


def test_the_seed_rack_example_is_reproduced_through_the_service(seed_rack_cluster):
    outcome = topic_create(name="racked", partitions=12, replication=4)
    assert outcome.replica_map == seed_table("seed_000_racks_balanced")["replica_map"]


def test_a_dry_run_stores_nothing_and_does_not_move_the_cursor():
    register_spus(0, 1, 2)
    before = store_counts()
    outcome = topic_create(name="orders", partitions=3, replication=3, dry_run=True)
    assert outcome.replica_map and not outcome.stored
    assert store_counts() == before


def test_too_few_spus_store_the_topic_as_insufficient_resources():
    register_spus(0)
    outcome = topic_create(name="orders", partitions=2, replication=3)
    topic = Topic.objects.get(name="orders")
    assert (topic.resolution, outcome.reason) == ("InsufficientResources", topic.reason)
    assert "need 2 more SPUs" in topic.reason
    assert not Partition.objects.exists()


def test_registering_spus_provisions_a_waiting_topic():
    register_spus(0)
    topic_create(name="orders", partitions=2, replication=2)
    spu_register(spu_id=1)
    topic = Topic.objects.get(name="orders")
    assert topic.resolution == "Provisioned" and topic.replica_map == [[0, 1], [1, 0]]
    assert Partition.objects.filter(topic=topic).count() == 2


def test_the_lifecycle_is_logged_init_pending_insufficient_then_provisioned():
    register_spus(0)
    topic_create(name="orders", partitions=1, replication=2)
    spu_register(spu_id=1)
    steps = [(e.params["from"], e.params["to"]) for e in
             Event.objects.filter(object_name="orders", operation="resolution").order_by("id")]
    assert steps == [("Init", "Pending"), ("Pending", "InsufficientResources"),
                     ("InsufficientResources", "Provisioned")]


def test_a_manual_map_in_either_shape_is_stored_as_given():
    register_spus(0, 1, 2)
    bare = [{"id": 0, "replicas": [2, 0]}, {"id": 1, "replicas": [0, 1]}]
    topic_create(name="bare", replica_assignment=bare)
    topic_create(name="object", replica_assignment={"partitions": bare})
    assert Topic.objects.get(name="bare").replica_map == [[2, 0], [0, 1]]
    assert Topic.objects.get(name="object").replica_map == [[2, 0], [0, 1]]
    assert ClusterState.objects.get().assignment_cursor == 0


MANUAL_REFUSALS = {
    "id-sequence": [{"id": 0, "replicas": [0]}, {"id": 2, "replicas": [1]}],
    "at-least-one": [{"id": 0, "replicas": []}],
    "same-length": [{"id": 0, "replicas": [0, 1]}, {"id": 1, "replicas": [1]}],
    "unique": [{"id": 0, "replicas": [1, 1]}],
    "non-negative-integers": [{"id": 0, "replicas": [-1]}],
    "spu-exists": [{"id": 0, "replicas": [0, 9]}],
    "fits-cluster": [{"id": 0, "replicas": [0, 1, 2, 3]}],
}


@pytest.mark.parametrize("rule", sorted(MANUAL_REFUSALS))
def test_each_manual_rule_refuses_the_topic_and_stores_nothing(rule):
    register_spus(0, 1, 2)
    before = store_counts()
    with pytest.raises(InvalidInput) as refused:
        topic_create(name="custom", replica_assignment=MANUAL_REFUSALS[rule])
    assert rule in str(refused.value.details) or "SPU 9" in refused.value.message \
        or "needs 4 SPUs" in refused.value.message
    assert "partition" in refused.value.message
    assert store_counts() == before


def test_numbers_that_conflict_with_the_file_are_refused():
    register_spus(0, 1)
    with pytest.raises(InvalidInput, match="partitions 3 conflicts"):
        topic_create(name="t", partitions=3, replica_assignment=[{"id": 0, "replicas": [0]}])


def test_a_duplicate_name_is_a_conflict_and_changes_nothing():
    register_spus(0)
    topic_create(name="orders", partitions=1, replication=1)
    before = store_counts()
    with pytest.raises(Conflict):
        topic_create(name="orders", partitions=1, replication=1)
    assert store_counts() == before


@pytest.mark.parametrize("kwargs,field", [
    ({"name": "Bad_Name", "partitions": 1, "replication": 1}, "name"),
    ({"name": "t", "partitions": 0, "replication": 1}, "partitions"),
    ({"name": "t", "partitions": 1, "replication": 0}, "replication"),
    ({"name": "t", "partitions": 1, "replication": 1, "min_lrs": 2}, "min_lrs"),
])
def test_bad_parameters_name_the_field_and_store_nothing(kwargs, field):
    register_spus(0)
    before = store_counts()
    with pytest.raises(InvalidInput) as refused:
        topic_create(**kwargs)
    assert refused.value.field == field
    assert store_counts() == before


def test_a_mix_of_racked_and_unracked_spus_refuses_unless_racks_are_ignored():
    register_spus(0, 1, rack="rack-a")
    register_spus(2)
    with pytest.raises(InvalidInput, match="SPU 2 has none"):
        topic_create(name="t", partitions=2, replication=2)
    assert not Topic.objects.exists()
    assert topic_create(name="t", partitions=2, replication=2,
                        ignore_racks=True).resolution == "Provisioned"


def test_deleting_a_topic_removes_its_partitions_and_is_logged():
    from cluster.services import topic_delete

    register_spus(0)
    topic_create(name="t", partitions=2, replication=1)
    topic_delete(name="t", by="tester")
    assert not Partition.objects.exists()
    assert Event.objects.filter(operation="delete", actor="tester").exists()
