"""`cluster import` from Kafka's tool outputs: into the store, or as a planning snapshot."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from cluster.models import Event, Spu, Topic
from cluster.projections import aggregates
from planner.models import ClusterImport

pytestmark = pytest.mark.django_db
KAFKA = Path(__file__).resolve().parents[1] / "fixtures" / "kafka"


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def refused(*args: str) -> str:
    with pytest.raises(CommandError) as error:
        call_command(*args, stdout=StringIO(), stderr=StringIO())
    assert error.value.returncode == 2
    return str(error.value)


def files(variant: str = "new") -> list[str]:
    return ["--kafka-describe", str(KAFKA / f"describe_{variant}.txt"),
            "--kafka-log-dirs", str(KAFKA / f"log_dirs_{variant}.txt"),
            "--kafka-brokers", str(KAFKA / f"brokers_{variant}.txt")]


def nothing_stored() -> bool:
    return not (Spu.objects.exists() or Topic.objects.exists() or ClusterImport.objects.exists())


@pytest.mark.redis
def test_a_store_import_shows_racks_replicas_and_leaders(redis_url):
    data = json.loads(run("cluster", "import", *files(), "--json"))
    assert data["stored"] is True and data["partitions"] == 5 and data["warnings"] == []
    spus = {s["id"]: s for s in json.loads(run("spu", "list", "--json"))}
    assert {i: spus[i]["rack"] for i in spus} == {1: "eu-west-1a", 2: "eu-west-1b",
                                                  3: "eu-west-1c", 4: "eu-west-1a"}
    rows = {(r["topic"], r["partition"]): r
            for r in json.loads(run("partition", "list", "--json"))}
    assert rows[("orders", 0)]["replicas"] == [1, 2, 3] and rows[("orders", 0)]["leader"] == 1
    assert rows[("orders", 1)]["leader"] == 2 and rows[("orders", 1)]["lrs"] == [2, 3]
    assert rows[("orders", 2)]["leader"] is None
    assert rows[("clicks", 0)]["replicas"] == [4, 1] and rows[("clicks", 0)]["leader"] == 4
    assert Topic.objects.get(name="orders").min_lrs == 2
    assert Topic.objects.get(name="orders").is_manual
    # The counts the pages read agree with the rows the import wrote.
    before = aggregates.counted()
    aggregates.rebuild()
    assert aggregates.counted() == before


def test_plan_only_keeps_a_snapshot_and_leaves_the_store_alone():
    data = json.loads(run("cluster", "import", *files("old"), "--plan-only", "--json"))
    assert data["stored"] is False and data["racks"] == ["r2"]
    assert not Spu.objects.exists() and not Topic.objects.exists()
    record = ClusterImport.objects.get(pk=data["id"])
    assert record.current["topics"][0]["sizes"][0] == 800 * 2 ** 30


def test_kafka_names_the_store_cannot_hold_are_renamed_and_said_so(tmp_path):
    describe = tmp_path / "d.txt"
    describe.write_text("Topic: Orders.v1\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: \n"
                        "\tTopic: Orders.v1\tPartition: 0\tLeader: 0\tReplicas: 0\tIsr: 0\n"
                        "Topic: __consumer_offsets\tPartitionCount: 1\tReplicationFactor: 1\t"
                        "Configs: \n\tTopic: __consumer_offsets\tPartition: 0\tLeader: 0\t"
                        "Replicas: 0\tIsr: 0\n")
    data = json.loads(run("cluster", "import", "--kafka-describe", str(describe), "--json"))
    assert data["renamed"] == {"Orders.v1": "orders-v1", "__consumer_offsets": "consumer-offsets"}
    assert set(Topic.objects.values_list("name", flat=True)) == {"orders-v1", "consumer-offsets"}


@pytest.mark.parametrize("plan_only", [False, True])
@pytest.mark.parametrize("which, body, reason", [
    ("describe", "Topic: t\tPartitionCount: 2\tReplicationFactor: 1\tConfigs: \n"
                 "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\n",
     "line 1: expected 2 partition lines"),
    ("log_dirs", "Querying\nReceived\n{\"version\": 1, \"brokers\": 3}\n",
     'line 3: expected "brokers": a list'),
    ("brokers", "localhost:9092 (id: 1 rack: a)\n", "line 1: expected a broker header"),
])
def test_a_bad_file_exits_2_with_its_name_and_line_and_stores_nothing(tmp_path, which, body,
                                                                     reason, plan_only):
    args = files()
    bad = tmp_path / f"{which}.txt"
    bad.write_text(body)
    flag = "--kafka-" + which.replace("_", "-")
    args[args.index(flag) + 1] = str(bad)
    message = refused("cluster", "import", *args, *(["--plan-only"] if plan_only else []))
    assert str(bad) in message and reason in message
    assert nothing_stored()


def test_a_topic_already_in_the_store_refuses_the_whole_import():
    run("cluster", "import", *files(), "--plan-only")
    call_command("spu", "register", "--id", "9", stdout=StringIO())
    from cluster.services import topic_create
    topic_create(name="clicks", partitions=1, replication=1)
    events = Event.objects.count()
    message = refused("cluster", "import", *files())
    assert "'clicks' already exists" in message
    assert set(Spu.objects.values_list("id", flat=True)) == {9}
    assert not Topic.objects.filter(name="orders").exists()
    assert Event.objects.count() == events


def test_a_missing_file_exits_2():
    assert "cannot read" in refused("cluster", "import", "--kafka-describe", "/nonexistent")


def test_registered_spus_are_kept_and_take_the_imported_racks():
    call_command("spu", "register", "--id", "1", "--rack", "old-rack", stdout=StringIO())
    call_command("spu", "register", "--id", "7", stdout=StringIO())
    run("cluster", "import", *files())
    racks = dict(Spu.objects.values_list("id", "rack"))
    assert racks[1] == "eu-west-1a" and racks[7] == "" and len(racks) == 5
