"""The topic controller of 003 as a pure function: resolutions and transitions."""
from cluster.core.assignment import SpuPlacement
from cluster.core.topic_controller import (TopicResolution as R, TopicSpec,
                                           reconcile_topic, topics_to_revisit)
from tests.seeds import seed_table

FIVE = [SpuPlacement(i) for i in range(5)]


def test_init_goes_through_pending_to_provisioned():
    decision = reconcile_topic(TopicSpec("orders", 15, 3), R.INIT, FIVE, cursor=0)
    assert decision.resolution is R.PROVISIONED
    assert decision.transitions == ((R.INIT, R.PENDING), (R.PENDING, R.PROVISIONED))
    assert decision.replica_map[0] == [0, 1, 2]


def test_invalid_parameters_give_invalid_config_with_the_reason():
    decision = reconcile_topic(TopicSpec("orders", 0, 3), R.INIT, FIVE, cursor=0)
    assert decision.resolution is R.INVALID_CONFIG
    assert "partitions must be between" in decision.reason
    assert decision.replica_map == []


def test_an_invalid_name_gives_invalid_config():
    decision = reconcile_topic(TopicSpec("Orders_1", 1, 1), R.INIT, FIVE, cursor=0)
    assert decision.resolution is R.INVALID_CONFIG and "lowercase" in decision.reason


def test_too_few_spus_give_insufficient_resources_naming_the_shortfall():
    decision = reconcile_topic(TopicSpec("orders", 3, 3), R.INIT, FIVE[:1], cursor=0)
    assert decision.resolution is R.INSUFFICIENT_RESOURCES
    assert decision.reason.startswith("need 2 more SPUs")
    assert decision.indexes_used == 0


def test_insufficient_resources_becomes_provisioned_once_spus_are_added():
    spec = TopicSpec("orders", 3, 3)
    decision = reconcile_topic(spec, R.INSUFFICIENT_RESOURCES, FIVE, cursor=4)
    assert decision.transitions == ((R.INSUFFICIENT_RESOURCES, R.PROVISIONED),)
    assert decision.start_index == 4 and decision.indexes_used == 3


def test_the_cursor_chains_the_start_index():
    decision = reconcile_topic(TopicSpec("orders", 1, 3), R.INIT, FIVE, cursor=9)
    assert decision.replica_map == [[4, 1, 2]]


def test_a_manual_map_naming_an_unknown_spu_is_invalid_config():
    spec = TopicSpec("orders", 1, 2, manual_map=[[0, 9]])
    decision = reconcile_topic(spec, R.INIT, FIVE, cursor=0)
    assert decision.resolution is R.INVALID_CONFIG
    assert "partition 0: SPU 9 is not registered" in decision.reason
    assert [(p.partition, p.rule) for p in decision.problems] == [(0, "spu-exists")]


def test_a_manual_map_is_stored_as_given_and_uses_no_index():
    spec = TopicSpec("orders", 2, 2, manual_map=[[4, 0], [0, 4]])
    decision = reconcile_topic(spec, R.INIT, FIVE, cursor=0)
    assert decision.replica_map == [[4, 0], [0, 4]] and decision.indexes_used == 0


def test_a_provisioned_topic_stays_as_it_is():
    decision = reconcile_topic(TopicSpec("orders", 1, 1), R.PROVISIONED, FIVE, cursor=0)
    assert decision.resolution is R.PROVISIONED and not decision.transitions


def test_add_spu_revisits_only_pending_and_insufficient_topics():
    waiting = topics_to_revisit({"a": R.PENDING, "b": R.PROVISIONED,
                                 "c": R.INSUFFICIENT_RESOURCES, "d": R.INVALID_CONFIG})
    assert waiting == ["a", "c"]


def test_the_project_follows_the_algorithm_not_the_topic_status_example_of_003():
    """003 shows partition 2 -> [2, 1, 0] for 6 partitions, replication 3 on a
    new (3-SPU) cluster; 000's algorithm gives [2, 0, 1]. DESIGN.md: the
    algorithm wins."""
    seed = seed_table("seed_003_topic_status")
    three = [SpuPlacement(i) for i in range(3)]
    decision = reconcile_topic(TopicSpec("t", seed["partitions"], seed["replication"]),
                               R.INIT, three, cursor=0)
    assert decision.replica_map == seed["algorithm_replica_map"]
    assert decision.replica_map[2] != seed["seed_replica_map"][2]
