"""The parsers of Kafka's tool outputs, against files in each documented variant."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.core.kafka_import import (
    ImportFormatError,
    import_texts,
    parse_brokers,
    parse_describe,
    parse_log_dirs,
)

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "kafka"


def text(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_describe_with_topic_id_elr_and_a_leaderless_partition():
    topics = {t.name: t for t in parse_describe(text("describe_new.txt"))}
    orders = topics["orders"]
    assert orders.topic_id == "3Lq2kO2KQ0mWm3Wv9R8w1A"
    assert orders.min_insync == 2
    assert orders.partitions[1].isr == (2, 3)
    assert orders.partitions[2].leader is None and orders.partitions[2].isr == ()
    assert topics["clicks"].min_insync is None and topics["clicks"].configs == {}


def test_describe_of_an_old_version_without_topic_id_nor_spaces():
    [orders] = parse_describe(text("describe_old.txt"))
    assert orders.topic_id is None and orders.partition_count == 3
    assert [orders.partitions[p].replicas for p in range(3)] == [(1, 2, 3), (2, 3, 4), (3, 4, 1)]


@pytest.mark.parametrize("body, line, expected", [
    ("Topic: t\tPartitionCount: x\tReplicationFactor: 1\tConfigs: ", 1, "PartitionCount"),
    ("Topic: t\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
     "\tTopic: t\tPartition: 0\tLeader: one\tReplicas: 1\tIsr: 1", 2, "Leader"),
    ("\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1", 1, "topic line"),
    ("Topic: t\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: \n"
     "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1", 1, "partition 1 is missing"),
    ("Topic: t\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
     "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,x\tIsr: 1", 2, "Replicas"),
    ("hello world", 1, "Name: value"),
    ("", 1, "at least one topic"),
    ("Topic: t\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: min.insync.replicas=two\n",
     1, "min.insync.replicas"),
])
def test_describe_errors_name_the_file_line_and_what_was_expected(body, line, expected):
    with pytest.raises(ImportFormatError) as caught:
        parse_describe(body, "topics.txt")
    assert caught.value.source == "topics.txt" and caught.value.line == line
    assert expected in str(caught.value) and str(caught.value).startswith(f"topics.txt, line {line}")


def test_log_dirs_with_and_without_disk_totals():
    new = parse_log_dirs(text("log_dirs_new.txt"))
    old = parse_log_dirs(text("log_dirs_old.txt"))
    assert sorted(new) == sorted(old) == [1, 2, 3, 4]
    assert new[1].sizes[("orders", 0)] == 800 * 2 ** 30
    assert new[2].sizes[("orders", 0)] == 800 * 2 ** 30 - 1024  # a trailing follower
    assert new[1].total_bytes == 2 * 2 ** 40 and new[1].usable_bytes == 2 ** 40
    assert old[1].total_bytes is None


def test_a_topic_name_with_dashes_splits_at_the_last_one():
    body = ("Querying brokers for log directories information\nReceived log directory "
            "information from brokers 0\n" + json.dumps({"version": 1, "brokers": [
                {"broker": 0, "logDirs": [{"logDir": "/d", "error": None, "partitions": [
                    {"partition": "my-topic-12", "size": 5, "offsetLag": 0,
                     "isFuture": False}]}]}]}))
    assert parse_log_dirs(body)[0].sizes == {("my-topic", 12): 5}


@pytest.mark.parametrize("body, line, expected", [
    ("Querying brokers\nReceived\n", 2, "JSON document"),
    ("Querying brokers\nReceived\n{\"version\": 1, \"brokers\": [}\n", 3, "JSON"),
    ("a\nb\n{\"version\": 2, \"brokers\": []}", 3, '"version":1'),
    ("a\nb\n{\"version\": 1, \"brokers\": [{\"broker\": 1, \"logDirs\": [{\"logDir\": \"/d\", "
     "\"partitions\": [{\"partition\": \"t-0\", \"size\": -1}]}]}]}", 3, "size"),
    ("a\nb\n{\"version\": 1, \"brokers\": [{\"broker\": 1, \"logDirs\": [{\"logDir\": \"/d\", "
     "\"partitions\": [{\"partition\": \"t0\", \"size\": 1}]}]}]}", 3, "topic-N"),
])
def test_log_dirs_errors(body, line, expected):
    with pytest.raises(ImportFormatError) as caught:
        parse_log_dirs(body, "dirs.txt")
    assert caught.value.line == line and expected in str(caught.value)


def test_broker_headers_old_and_new():
    new = parse_brokers(text("brokers_new.txt"))
    assert new[3].rack == "eu-west-1c" and new[3].endpoint == "kafka-3.example.com:9092"
    old = parse_brokers(text("brokers_old.txt"))
    assert old[1].rack is None and old[3].rack == "r2" and old[2].port == 9093


@pytest.mark.parametrize("body, line", [
    ("localhost:9092 (id: one rack: null) -> (\n)", 1),
    ("localhost:9092 (id: 1 rack: null) -> (\n\tProduce(0): 0 to 9\n", 2),
    ("localhost:9092 (id: 1 rack: null) -> (\n)\nlocalhost:9093 (id: 1 rack: a) -> (\n)", 3),
])
def test_broker_errors(body, line):
    with pytest.raises(ImportFormatError) as caught:
        parse_brokers(body, "api.txt")
    assert caught.value.line == line


def test_snapshot_of_all_three_files():
    snap = import_texts(text("describe_new.txt"), text("log_dirs_new.txt"),
                        text("brokers_new.txt"))
    assert {s.id: s.rack for s in snap.cluster.spus} == {
        1: "eu-west-1a", 2: "eu-west-1b", 3: "eu-west-1c", 4: "eu-west-1a"}
    orders = snap.cluster.topic("orders")
    assert orders.sizes == (800 * 2 ** 30, 2 * 2 ** 20, 5 * 2 ** 30)  # no leader: the largest copy
    assert orders.leaders == (1, 2, None)
    assert snap.min_insync == {"orders": 2}
    assert snap.capacities == {b: 2 * 2 ** 40 for b in (1, 2, 3, 4)}
    assert snap.isr["orders"][1] == (2, 3)
    assert snap.warnings == ()


def test_contradictions_become_warnings_never_silently_dropped():
    describe = text("describe_old.txt")
    dirs = json.loads(text("log_dirs_old.txt").split("\n", 2)[2])
    dirs["brokers"][0]["logDirs"][0]["partitions"].append(
        {"partition": "orders-1", "size": 7, "offsetLag": 0, "isFuture": False})  # broker 1
    dirs["brokers"][0]["logDirs"][0]["partitions"].append(
        {"partition": "ghost-0", "size": 7, "offsetLag": 0, "isFuture": False})
    brokers = "localhost:9092 (id: 1 rack: a) -> (\n)\n"
    snap = import_texts(describe, "q\nr\n" + json.dumps(dirs), brokers)
    joined = "\n".join(snap.warnings)
    assert "orders-1 is on broker 1's disk but the describe does not list it" in joined
    assert "ghost-0 is on broker 1's disk but not in the describe" in joined
    for spu in (2, 3, 4):
        assert f"broker {spu} is named in the describe or log dirs but not in the broker list" \
            in joined


def test_a_partition_mid_reassignment_is_refused_with_its_line():
    body = ("Topic: t\tPartitionCount: 2\tReplicationFactor: 2\tConfigs: \n"
            "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n"
            "\tTopic: t\tPartition: 1\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\t"
            "Adding Replicas: 3\tRemoving Replicas: \n")
    with pytest.raises(ImportFormatError) as caught:
        import_texts(body, names=("d.txt", "", ""))
    assert caught.value.line == 3 and "reassignment" in str(caught.value)


def test_config_values_with_commas_stay_whole():
    body = ("Topic: t\tPartitionCount: 1\tReplicationFactor: 2\tConfigs: "
            "leader.replication.throttled.replicas=0:1,0:2,min.insync.replicas=2\n"
            "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2\tIsr: 1,2\n")
    [topic] = parse_describe(body)
    assert topic.configs == {"leader.replication.throttled.replicas": "0:1,0:2",
                             "min.insync.replicas": "2"}
    assert topic.min_insync == 2
