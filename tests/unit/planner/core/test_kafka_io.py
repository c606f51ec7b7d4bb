from __future__ import annotations

import json

import pytest

from planner.core import (Scenario, Spu, fluvio_assignments, kafka_reassignment,
                          parse_kafka_reassignment, plan)
from planner.core.kafka_io import ReassignmentError

DOCUMENT = {"version": 1, "partitions": [
    {"topic": "orders", "partition": 1, "replicas": [2, 3]},
    {"topic": "orders", "partition": 0, "replicas": [1, 2]},
    {"topic": "logs", "partition": 0, "replicas": [3, 1], "log_dirs": ["any", "any"]},
]}


def test_a_reassignment_json_becomes_the_current_layout():
    cluster = parse_kafka_reassignment(json.dumps(DOCUMENT), spus=[Spu(1, "a"), Spu(4, "b")])
    assert cluster.topic("orders").replicas == ((1, 2), (2, 3))
    assert cluster.topic("logs").replicas == ((3, 1),)
    assert [s.id for s in cluster.spus] == [1, 2, 3, 4]
    assert cluster.spus[0].rack == "a" and cluster.spus[1].rack is None


def test_partition_sizes_can_be_attached():
    cluster = parse_kafka_reassignment(DOCUMENT, sizes={"orders": {0: 10, 1: 20}})
    assert cluster.topic("orders").sizes == (10, 20)


@pytest.mark.parametrize("document, message", [
    ("{not json", "not JSON"),
    ("[]", "JSON object"),
    ({"version": 2, "partitions": []}, '"version" must be 1'),
    ({"version": 1}, '"partitions" must be a list'),
    ({"version": 1, "partitions": [7]}, "partitions[0]: must be an object"),
    ({"version": 1, "partitions": [{"partition": 0, "replicas": [1]}]}, '"topic"'),
    ({"version": 1, "partitions": [{"topic": "a\x00b", "partition": 0, "replicas": [1]}]},
     '"topic" must be a Kafka topic name'),
    ({"version": 1, "partitions": [{"topic": "t" * 250, "partition": 0, "replicas": [1]}]},
     '"topic" must be a Kafka topic name'),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ({"version": 1, "partitions": [{"topic": "t", "partition": -1, "replicas": [1]}]}, '"partition"'),
    ({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": []}]}, "non-empty list"),
    ({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, "2"]}]}, "non-negative integers"),
    ({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 1]}]}, "listed twice"),
    ({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1]},
                                   {"topic": "t", "partition": 0, "replicas": [2]}]}, "t/0 listed twice"),
    ({"version": 1, "partitions": [{"topic": "t", "partition": 1, "replicas": [1]}]}, "partition 0 is missing"),
    ({"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1]},
                                   {"topic": "t", "partition": 1, "replicas": [1, 2]}]}, "different replica counts"),
])
def test_malformed_reassignments_are_refused_with_a_reason(document, message):
    with pytest.raises(ReassignmentError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_kafka_reassignment(document)


def test_a_plan_exports_as_kafka_reassignment_of_changed_partitions():
    cluster = parse_kafka_reassignment(DOCUMENT)
    result = plan(cluster, Scenario("drop 3", remove_spus=(3,)))
    exported = kafka_reassignment(result)
    assert exported["version"] == 1
    assert {(p["topic"], p["partition"]) for p in exported["partitions"]} == \
        {(m.topic, m.partition) for m in result.moves}
    assert all(3 not in p["replicas"] for p in exported["partitions"])
    full = kafka_reassignment(result, only_changed=False)
    assert len(full["partitions"]) == 3
    assert parse_kafka_reassignment(full).topic("orders").replicas == result.target["orders"]


def test_a_plan_exports_as_one_fluvio_assignment_file_per_topic():
    result = plan(parse_kafka_reassignment(DOCUMENT))
    files = fluvio_assignments(result)
    assert set(files) == {"orders", "logs"}
    assert files["orders"] == {"partitions": [
        {"id": 0, "replicas": list(result.target["orders"][0])},
        {"id": 1, "replicas": list(result.target["orders"][1])}]}
