"""`plan rebalance|grid --engine spark` on a real Spark standalone cluster.

A master and one worker are started from the installed pyspark's
``spark-class`` (loopback, free ports, a work dir under tmp) and stopped at
the end, also when a test fails; SPARK_MASTER points the command at them.
"""
import json
from io import StringIO

import pytest
from django.core.management import call_command

from cluster.services import topic_create
from planner.spark.session import spark_session
from planner.spark.standalone import standalone_cluster

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.django_db]


@pytest.fixture(scope="module")
def master_url(tmp_path_factory):
    with standalone_cluster(tmp_path_factory.mktemp("spark-standalone"), cores=2,
                            memory="1g") as url:
        yield url
        session = spark_session(url)
        session.stop()


@pytest.fixture
def on_standalone(master_url, settings, monkeypatch):
    monkeypatch.setenv("SPARK_MASTER", master_url)
    settings.SPARK_MASTER = master_url
    settings.LIVE_UPDATES = False
    return master_url


@pytest.fixture
def layout(seed_rack_cluster):
    topic_create(name="orders", partitions=12, replication=3)
    topic_create(name="clicks", partitions=12, replication=2)


def run(*args: str) -> dict | list:
    out = StringIO()
    call_command(*args, "--json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


def test_the_spark_engine_runs_on_the_standalone_master(on_standalone, layout):
    run("plan", "rebalance", "--engine", "spark")
    from pyspark import SparkContext

    assert SparkContext._active_spark_context.master == on_standalone


def test_a_rebalance_on_the_cluster_equals_the_in_process_plan(on_standalone, layout):
    args = ("plan", "rebalance", "--add-spu", "12:rack-a", "--remove-spu", "3")
    on_spark = run(*args, "--engine", "spark")
    local = run(*args)
    for key in ("moves", "metrics", "target"):
        assert on_spark[key] == local[key], key
    assert on_spark["metrics"]["replicas_moved"] > 0


def test_a_grid_on_the_cluster_equals_the_in_process_grid(on_standalone, layout):
    on_spark = run("plan", "grid", "--up-to", "2", "--engine", "spark")
    local = run("plan", "grid", "--up-to", "2")
    assert on_spark == local
    assert len(local) == 12 + 4 + 4 * 2


def test_a_streamed_plan_on_the_cluster_moves_what_the_in_process_plan_moves(master_url, tmp_path):
    import random

    from planner.core import Cluster, Scenario, Spu, Topic, plan
    from planner.spark import plan_streamed, topics_from_cluster

    rng = random.Random(4)
    spus = tuple(Spu(i, f"rack-{i % 4}") for i in range(16))
    topics = tuple(Topic(f"t{k}", tuple(tuple(rng.sample(range(14), 3)) for _ in range(30)))
                   for k in range(10))
    cluster = Cluster(spus, topics)
    scenario = Scenario("add two", add_spus=(Spu(16, "rack-0"), Spu(17, "rack-1")))
    spark = spark_session(master_url)
    streamed = plan_streamed(spark, spus, topics_from_cluster(spark, topics, 4), scenario,
                             moves_dir=str(tmp_path / "moves"))
    expected = plan(cluster, scenario)
    for key in ("replicas_moved", "lower_bound", "replica_spread", "leader_spread",
                "rack_violations"):
        assert streamed.metrics[key] == expected.metrics[key], key
    lines = [line for part in (tmp_path / "moves").glob("part-*")
             for line in part.read_text().splitlines()]
    assert len(lines) == streamed.metrics["partitions_changed"] > 0
