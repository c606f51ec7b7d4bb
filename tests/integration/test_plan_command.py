"""`plan rebalance|grid|export` against the store and Kafka reassignment files."""
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from cluster.services import topic_create
from planner.models import Plan
from tests.helpers import register_spus

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def refused(*args: str) -> CommandError:
    with pytest.raises(CommandError) as error:
        call_command(*args, stdout=StringIO(), stderr=StringIO())
    assert error.value.returncode == 2
    return error.value


@pytest.fixture
def racked_cluster(seed_rack_cluster):
    topic_create(name="orders", partitions=12, replication=3)
    topic_create(name="clicks", partitions=12, replication=2)


@pytest.fixture
def balanced_cluster(seed_rack_cluster):
    topic_create(name="orders", partitions=24, replication=3)


def test_rebalance_json_has_moves_metrics_and_target(racked_cluster):
    data = json.loads(run("plan", "rebalance", "--add-spu", "12:rack-a", "--json"))
    assert set(data) >= {"moves", "metrics", "target"}
    for key in ("replicas_moved", "partitions_changed", "bytes_moved", "leader_changes",
                "lower_bound", "replica_spread", "leader_spread", "topic_replica_spread",
                "rack_violations", "failover_concentration", "moved_to_lower_bound",
                "search_stopped_early"):
        assert key in data["metrics"], key
    assert data["metrics"]["search_stopped_early"] == 0
    assert "replica_spread" in data["metrics"]["before"]
    assert sorted(data["target"]) == ["clicks", "orders"]
    assert data["target"]["orders"][0].keys() == {"id", "replicas"}


def test_a_rebalance_is_stored_with_its_scenario(racked_cluster):
    run("plan", "rebalance", "--remove-spu", "4")
    plan = Plan.objects.get()
    assert plan.scenario["remove_spus"] == [4] and plan.source == "store"
    assert all(4 not in row["replicas"] for rows in plan.target.values() for row in rows)


def test_removing_an_spu_moves_exactly_its_replicas(balanced_cluster):
    from cluster.models import Topic

    hosted = sum(4 in replicas for replicas in Topic.objects.get().replica_map)
    data = json.loads(run("plan", "rebalance", "--remove-spu", "4", "--json"))
    assert data["metrics"]["replicas_moved"] == hosted == data["metrics"]["lower_bound"]
    assert all(4 in m["removed"] for m in data["moves"] if m["added"])


def test_an_already_balanced_cluster_needs_no_moves(balanced_cluster):
    data = json.loads(run("plan", "rebalance", "--json"))
    assert data["metrics"]["replicas_moved"] == 0


def test_the_chained_demo_layout_is_fixed_at_its_lower_bound(racked_cluster):
    data = json.loads(run("plan", "rebalance", "--json"))
    assert data["metrics"]["replicas_moved"] == data["metrics"]["lower_bound"]
    assert data["metrics"]["replica_spread"] <= 1


def test_a_kafka_reassignment_file_is_the_current_layout(tmp_path, racked_cluster):
    path = tmp_path / "current.json"
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "events", "partition": p, "replicas": [0, 1]} for p in range(4)]}))
    data = json.loads(run("plan", "rebalance", "--from-kafka-json", str(path), "--json"))
    assert list(data["target"]) == ["events"]
    assert data["metrics"]["replicas_moved"] > 0
    assert Plan.objects.get().source == "kafka-json"


def test_a_broker_in_the_file_that_is_not_an_spu_is_refused(tmp_path, racked_cluster):
    path = tmp_path / "current.json"
    path.write_text(json.dumps({"version": 1, "partitions": [
        {"topic": "events", "partition": 0, "replicas": [0, 77]}]}))
    assert "77" in str(refused("plan", "rebalance", "--from-kafka-json", str(path)))
    assert not Plan.objects.exists()


@pytest.mark.parametrize("args", [["--remove-spu", "99"], ["--add-spu", "x:rack-a"],
                                  ["--replication", "orders:zero"]])
def test_bad_scenarios_exit_2_and_store_nothing(args, racked_cluster):
    refused("plan", "rebalance", *args)
    assert not Plan.objects.exists()


def test_exports_write_kafka_json_and_fluvio_files(tmp_path, racked_cluster):
    kafka, fluvio = tmp_path / "reassign.json", tmp_path / "fluvio"
    run("plan", "rebalance", "--add-spu", "12:rack-b", "--export-kafka", str(kafka),
        "--export-fluvio", str(fluvio))
    document = json.loads(kafka.read_text())
    assert document["version"] == 1 and document["partitions"]
    assert sorted(p.name for p in fluvio.iterdir()) == ["clicks.json", "orders.json"]
    orders = json.loads((fluvio / "orders.json").read_text())
    assert [p["id"] for p in orders["partitions"]] == list(range(12))


def test_an_exported_fluvio_file_is_accepted_by_topic_create(tmp_path, racked_cluster):
    fluvio = tmp_path / "fluvio"
    run("plan", "rebalance", "--export-fluvio", str(fluvio))
    run("topic", "create", "orders-copy", "-f", str(fluvio / "orders.json"), "--dry-run")


def test_grid_lists_every_spu_removal_and_rack_loss(racked_cluster):
    rows = json.loads(run("plan", "grid", "--up-to", "1", "--json"))
    names = {r["scenario"] for r in rows}
    assert {f"remove-spu-{i}" for i in range(12)} <= names
    assert any("rack-a" in n and "lose" in n for n in names)
    assert all("replicas_moved" in r for r in rows)


@pytest.mark.spark
def test_the_spark_engine_gives_the_local_plan_and_grid(racked_cluster):
    local = json.loads(run("plan", "rebalance", "--add-spu", "12:rack-c", "--json"))
    spark = json.loads(run("plan", "rebalance", "--add-spu", "12:rack-c", "--engine", "spark",
                           "--json"))
    assert (spark["moves"], spark["target"], spark["metrics"]) == \
        (local["moves"], local["target"], local["metrics"])
    assert Plan.objects.filter(engine="spark").count() == 1
    grid = ["plan", "grid", "--up-to", "1", "--json"]
    assert json.loads(run(*grid, "--engine", "spark")) == json.loads(run(*grid))


@pytest.mark.parametrize("service", ["plan_grid", "plan_create"])
def test_an_unknown_engine_is_refused_by_every_planner_service(service, racked_cluster):
    from cluster.errors import InvalidInput
    from planner import core, services

    kwargs = {"options": core.Options(), "engine": "hadoop"}
    if service == "plan_create":
        kwargs["scenario"] = core.Scenario()
    with pytest.raises(InvalidInput, match="must be local or spark"):
        getattr(services, service)(**kwargs)
    assert not Plan.objects.exists()
