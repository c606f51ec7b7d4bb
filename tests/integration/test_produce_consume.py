"""``produce`` / ``consume`` commands without a worker: the services step in-process."""
from __future__ import annotations

import json

import pytest

from tests.helpers import refused, register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def records(*args: str) -> list[dict]:
    return json.loads(run("consume", *args, "--json"))


@pytest.fixture
def topic(redis_url):
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "--partitions", "2", "--replication", "3", "--min-lrs", "2")
    return "t"


def test_count_appends_generated_values_named_by_offset(topic):
    out = json.loads(run("produce", topic, "--count", "3", "--acks", "all", "--json"))
    assert out["state"] == "acknowledged" and out["base_offset"] == 0
    assert records(topic) == [{"offset": i, "value": f"record-{i}"} for i in range(3)]


def test_values_are_read_back_in_offset_order_on_the_chosen_partition(topic):
    run("produce", topic, "--partition", "1", "--value", "a", "--value", "b", "--acks", "all")
    assert records(topic, "--partition", "1") == [{"offset": 0, "value": "a"},
                                                  {"offset": 1, "value": "b"}]
    assert records(topic, "--partition", "0") == []


def test_acks_1_records_are_uncommitted_until_followers_fetch(topic):
    run("produce", topic, "--value", "x", "--acks", "1")
    assert records(topic) == []
    assert records(topic, "--uncommitted") == [{"offset": 0, "value": "x"}]


def test_acks_all_is_refused_with_the_reason_when_the_lrs_is_below_min_lrs(topic):
    run("spu", "offline", "1")
    run("spu", "offline", "2")
    error = refused("produce", topic, "--count", "1", "--acks", "all", code=1)
    assert "NOT_ENOUGH_REPLICAS" in str(error) and "needs 2" in str(error)
    assert records(topic, "--uncommitted") == []


def test_a_write_to_a_partition_without_leader_is_refused(redis_url):
    register_spus(0, 1, online=True)
    run("topic", "create", "solo", "--partitions", "1", "--replication", "1")
    leader = json.loads(run("partition", "list", "--json"))[0]["leader"]
    run("spu", "offline", str(leader))
    error = refused("produce", "solo", "--count", "1", code=1)
    assert "NOT_LEADER" in str(error)


def test_bad_input_exits_2(topic):
    refused("produce", "nope", "--count", "1")
    refused("produce", topic, "--partition", "9", "--count", "1")
    refused("consume", topic, "--partition", "9")


def test_partition_list_json_has_each_replicas_leo_and_hw(topic):
    run("produce", topic, "--count", "4", "--acks", "all")
    row = json.loads(run("partition", "list", "--topic", topic, "--json"))[0]
    assert {k: row[k] for k in ("topic", "partition", "resolution", "hw", "leo")} == \
        {"topic": topic, "partition": 0, "resolution": "Online", "hw": 4, "leo": 4}
    assert row["leader"] == row["replicas"][0] and sorted(row["lrs"]) == [0, 1, 2]
    assert [r["leo"] for r in row["replica_status"]] == [4, 4, 4]
    assert all(set(r) == {"spu", "leo", "hw"} for r in row["replica_status"])
