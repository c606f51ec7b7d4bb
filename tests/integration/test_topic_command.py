"""The fluvio-like commands: output shapes, --dry-run, exit 2 with nothing stored."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cluster.models import Topic
from tests.helpers import refused, register_spus, run, store_counts
from tests.seeds import seed_table

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def test_topic_create_json_prints_the_file_format_plus_name_resolution_reason():
    register_spus(0, 1, 2, 3, 4)
    data = json.loads(run("topic", "create", "orders", "--partitions", "15",
                          "--replication", "3", "--json"))
    expected = seed_table("seed_000_cra_5spus")["index_table"][:15]
    assert {k: data[k] for k in ("name", "resolution", "reason")} == \
        {"name": "orders", "resolution": "Provisioned", "reason": ""}
    assert data["partitions"] == [{"id": i, "replicas": r} for i, r in enumerate(expected)]


def test_dry_run_prints_the_map_and_stores_nothing():
    register_spus(0, 1, 2)
    before = store_counts()
    data = json.loads(run("topic", "create", "t", "-p", "3", "-r", "2", "--dry-run", "--json"))
    assert data["partitions"][0] == {"id": 0, "replicas": [0, 1]}
    assert store_counts() == before


def test_a_file_creates_the_topic_with_its_map(tmp_path):
    register_spus(0, 1, 2)
    path = tmp_path / "map.json"
    path.write_text(json.dumps({"partitions": [{"id": 0, "replicas": [0, 1, 2]},
                                               {"id": 1, "replicas": [1, 2, 0]}]}))
    data = json.loads(run("topic", "create", "custom", "--replica-assignment", str(path), "--json"))
    assert data["partitions"][1]["replicas"] == [1, 2, 0]
    assert Topic.objects.get(name="custom").partitions == 2


def test_dry_run_with_a_file_validates_only(tmp_path):
    register_spus(0, 1)
    path = tmp_path / "map.json"
    path.write_text(json.dumps([{"id": 0, "replicas": [1, 0]}]))
    before = store_counts()
    assert "would be Provisioned" in run("topic", "create", "custom", "-f", str(path), "--dry-run")
    assert store_counts() == before


FAILING = {
    "id-sequence": [{"id": 1, "replicas": [0]}],
    "at-least-one": [{"id": 0, "replicas": []}],
    "same-length": [{"id": 0, "replicas": [0, 1]}, {"id": 1, "replicas": [1]}],
    "unique": [{"id": 0, "replicas": [0, 0]}],
    "non-negative-integers": [{"id": 0, "replicas": [0, -2]}],
    "spu-exists": [{"id": 0, "replicas": [0, 5]}],
}


@pytest.mark.parametrize("rule", sorted(FAILING))
def test_each_manual_rule_exits_2_with_the_reason_and_stores_nothing(rule, tmp_path):
    register_spus(0, 1, 2)
    path = tmp_path / "map.json"
    path.write_text(json.dumps({"partitions": FAILING[rule]}))
    before = store_counts()
    error = refused("topic", "create", "custom", "-f", str(path))
    assert "partition" in str(error)
    assert store_counts() == before


@pytest.mark.parametrize("content", ["{not json", "[]"])
def test_unreadable_files_exit_2(content, tmp_path):
    path = tmp_path / "map.json"
    path.write_text(content)
    refused("topic", "create", "custom", "-f", str(path))
    assert not Topic.objects.exists()


def test_a_missing_file_exits_2(tmp_path):
    refused("topic", "create", "custom", "-f", str(tmp_path / "absent.json"))


def test_conflicting_numbers_and_file_exit_2(tmp_path):
    register_spus(0, 1)
    path = tmp_path / "map.json"
    path.write_text(json.dumps([{"id": 0, "replicas": [0, 1]}]))
    assert "conflicts" in str(refused("topic", "create", "t", "-f", str(path), "-r", "1"))


def test_insufficient_resources_is_stored_and_exits_0():
    data = json.loads(run("topic", "create", "t", "-p", "1", "-r", "2", "--json"))
    assert data["resolution"] == "InsufficientResources" and "need 2 more SPUs" in data["reason"]


def test_topic_list_describe_and_delete():
    register_spus(0, 1)
    run("topic", "create", "t", "-p", "2", "-r", "2")
    assert json.loads(run("topic", "list", "--json"))[0]["name"] == "t"
    described = json.loads(run("topic", "describe", "t", "--json"))
    assert described["partitions"] == [{"id": 0, "replicas": [0, 1]}, {"id": 1, "replicas": [1, 0]}]
    run("topic", "delete", "t")
    refused("topic", "describe", "t")


def test_partition_list_json_has_one_row_per_partition(redis_url):
    register_spus(0, 1)
    run("topic", "create", "t", "-p", "2", "-r", "2")
    rows = json.loads(run("partition", "list", "--topic", "t", "--json"))
    assert [(r["partition"], r["replicas"]) for r in rows] == [(0, [0, 1]), (1, [1, 0])]


def test_spu_and_spg_commands():
    run("spu", "register", "--id", "5", "--rack", "rack-a", "--public", "h:1")
    assert json.loads(run("spu", "list", "--json"))[0]["rack"] == "rack-a"
    data = json.loads(run("spg", "create", "g", "--replicas", "2", "--min-id", "10", "--json"))
    assert (data["resolution"], data["spus"]) == ("Reserved", [10, 11])
    run("spg", "scale", "g", "--replicas", "1")
    assert json.loads(run("spg", "list", "--json"))[0]["spus"] == [10]
    run("spg", "delete", "g")
    run("spu", "unregister", "--id", "5")
    assert json.loads(run("spu", "list", "--json")) == []
    refused("spu", "unregister", "--id", "5")


def test_the_real_command_line_exits_2_on_bad_input_and_0_on_success(tmp_path):
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite3'}"}

    def manage(*args):
        return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
    assert manage("migrate", "-v0").returncode == 0
    assert manage("spu", "register", "--id", "0").returncode == 0
    bad = manage("topic", "create", "Bad_Name", "-p", "1", "-r", "1")
    assert bad.returncode == 2 and "lowercase" in bad.stderr
    assert manage("topic", "create", "good", "-p", "1", "-r", "1").returncode == 0
    assert manage("spu", "frobnicate").returncode == 2
