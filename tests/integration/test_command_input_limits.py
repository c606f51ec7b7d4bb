"""Commands refuse what no cluster could use: exit 2, one line, nothing stored or grown."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cluster.services import topic_create
from planner.models import Plan
from tests.helpers import refused, register_spus

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("up_to", ["11", "99999999999999999999999", "-1"])
def test_a_grid_past_ten_added_spus_per_rack_is_refused_as_the_api_does(seed_rack_cluster,
                                                                        up_to):
    error = refused("plan", "grid", "--up-to", up_to)
    assert "--up-to must be from 0 to 10" in str(error)


@pytest.mark.parametrize("rack", ["a" * 5000, "rack a"])
def test_a_rebalance_adding_an_spu_to_a_rack_no_spu_could_join_is_refused(seed_rack_cluster,
                                                                          rack):
    error = refused("plan", "rebalance", "--add-spu", f"12:{rack}")
    assert "must be 1-63 letters, digits" in str(error) and len(str(error)) < 120
    assert not Plan.objects.exists()


@pytest.fixture
def deep_file(tmp_path) -> Path:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    return path


def test_a_kafka_file_nested_100000_deep_is_bad_input(seed_rack_cluster, deep_file):
    assert "nested too deeply" in str(refused("plan", "rebalance", "--from-kafka-json",
                                              str(deep_file)))
    assert not Plan.objects.exists()


def test_a_binary_kafka_file_is_bad_input(seed_rack_cluster, tmp_path):
    path = tmp_path / "blob.json"
    path.write_bytes(bytes(range(256)) * 4)
    assert "not UTF-8 text" in str(refused("plan", "rebalance", "--from-kafka-json", str(path)))


@pytest.mark.django_db(transaction=True)  # the command reads the test's store from its file
def test_the_real_command_line_says_it_in_one_line_without_a_traceback(deep_file):
    from django.db import connection

    env = {**os.environ, "DATABASE_URL": f"sqlite:///{connection.settings_dict['NAME']}"}
    done = subprocess.run([sys.executable, "manage.py", "plan", "rebalance",
                           "--from-kafka-json", str(deep_file)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "nested too deeply" in done.stderr


@pytest.mark.parametrize("wait_s", ["-5", "1e400", "nan", "3601"])
def test_produce_refuses_a_wait_no_clock_can_keep(redis_url, wait_s):
    register_spus(0)
    topic_create(name="t", partitions=1, replication=1)
    error = refused("produce", "t", "--count", "1", "--acks", "all", "--wait-s", wait_s)
    assert "--wait-s must be from 0 to 3600 seconds" in str(error)


def test_produce_refuses_bad_input_even_while_redis_is_down():
    # The refusal is about the input: exit 2 before anything asks Redis (exit 1).
    refused("produce", "t", "--count", "1", "--wait-s", "-5")


LONG = "a" * 5000


@pytest.mark.parametrize("args", [("partition", "list", "--topic", LONG),
                                  ("produce", LONG, "--count", "1"), ("consume", LONG)])
def test_a_topic_name_of_5000_characters_is_refused_not_searched(args):
    error = refused(*args)
    assert str(error) == "topic name is 5000 characters; at most 63 allowed"
