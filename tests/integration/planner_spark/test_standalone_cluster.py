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
