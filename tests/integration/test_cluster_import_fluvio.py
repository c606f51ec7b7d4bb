"""`cluster import --fluvio-partitions F [--fluvio-spus F]`: a Fluvio cluster from
``fluvio partition list -O json`` and ``fluvio cluster spu list -O json`` (fixtures shaped
as Fluvio's serde output of Metadata<PartitionSpec> / Metadata<SpuSpec>)."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from cluster.models import Spu, Topic
from planner.models import ClusterImport

pytestmark = pytest.mark.django_db
FLUVIO = Path(__file__).resolve().parents[1] / "fixtures" / "fluvio"
FILES = ["--fluvio-partitions", str(FLUVIO / "partition_list.json"),
         "--fluvio-spus", str(FLUVIO / "spu_list.json")]


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def refused(*args: str) -> str:
    with pytest.raises(CommandError) as error:
        run(*args)
    assert error.value.returncode == 2
    return str(error.value)


def nothing_stored() -> bool:
    return not (Spu.objects.exists() or Topic.objects.exists() or ClusterImport.objects.exists())


@pytest.mark.redis
def test_a_fluvio_store_import_shows_racks_replicas_leaders_and_lrs(redis_url):
    out, err = run("cluster", "import", *FILES, "--json")
    data = json.loads(out)
    assert data["stored"] is True and data["partitions"] == 5 and data["sized"] is True
    spus = {s["id"]: s for s in json.loads(run("spu", "list", "--json")[0])}
    assert {i: spus[i]["rack"] for i in spus} == {1: "rack-a", 2: "rack-b", 3: "rack-c",
                                                  4: "rack-a"}
    rows = {(r["topic"], r["partition"]): r
            for r in json.loads(run("partition", "list", "--json")[0])}
    assert rows[("orders", 0)]["replicas"] == [1, 2, 3] and rows[("orders", 0)]["leader"] == 1
    # lsr 2 of 3: the leader and the follower with the highest LEO (1 at 90, 3 at 10).
    assert rows[("orders", 1)]["leader"] == 2 and rows[("orders", 1)]["lrs"] == [2, 1]
    assert rows[("orders", 2)]["leader"] is None
    assert rows[("clicks", 0)]["replicas"] == [4, 1] and rows[("clicks", 0)]["leader"] == 4
    assert "orders-1" in err and "highest LEO" in err


def test_a_fluvio_snapshot_plans_by_bytes_with_its_sizes_and_racks():
    snap = json.loads(run("cluster", "import", *FILES, "--plan-only", "--json")[0])
    assert snap["stored"] is False and snap["racks"] == ["rack-a", "rack-b", "rack-c"]
    assert not Topic.objects.exists() and not Spu.objects.exists()
    record = ClusterImport.objects.get(pk=snap["id"])
    sizes = {t["name"]: t["sizes"] for t in record.current["topics"]}
    assert sizes["orders"][0] == 800 * 2 ** 20 and sizes["orders"][2] == 0
    plan = json.loads(run("plan", "rebalance", "--balance", "bytes", "--snapshot",
                          str(snap["id"]), "--json")[0])
    assert {"bytes_moved", "per_spu", "risk"} <= plan.keys()
    # clicks-1 sits twice in rack-a (SPUs 1 and 4): losing it takes clicks offline; not after.
    assert plan["risk"]["before"]["worst_rack"]["offline"] >= 1
    assert plan["risk"]["after"]["worst_rack"]["offline"] == 0


@pytest.mark.parametrize("body, reason", [
    ("{", "line 1: expected JSON"),
    ('{"a": 1}', "a JSON list"),
    ('[{"name": "orders", "spec": {}, "status": {}}]', "<topic>-<partition>"),
    ('[{"name": "orders-0", "spec": {"leader": 1}, "status": {}}]', '"replicas"'),
    ('[{"name": "orders-0", "spec": {"leader": 1, "replicas": [1]}, '
     '"status": {"resolution": "Sideways"}}]', '"resolution"'),
    ('[{"name": "orders-1", "spec": {"leader": 1, "replicas": [1]}, '
     '"status": {"resolution": "Online"}}]', "partition 0 is missing"),
])
def test_a_bad_partition_list_exits_2_with_file_and_reason_and_stores_nothing(
        tmp_path, body, reason):
    path = tmp_path / "parts.json"
    path.write_text(body)
    message = refused("cluster", "import", "--fluvio-partitions", str(path))
    assert str(path) in message and reason in message
    assert nothing_stored()


def test_a_bad_spu_list_exits_2_and_stores_nothing(tmp_path):
    path = tmp_path / "spus.json"
    path.write_text('[{"name": "x", "spec": {"spuId": -1}}]')
    message = refused("cluster", "import", "--fluvio-partitions",
                      str(FLUVIO / "partition_list.json"), "--fluvio-spus", str(path))
    assert str(path) in message and "spuId" in message and nothing_stored()


def test_kafka_and_fluvio_files_together_or_neither_are_refused():
    assert "not both" in refused("cluster", "import", *FILES, "--kafka-describe", "x.txt")
    assert "--kafka-describe FILE is required" in refused("cluster", "import")
    assert "needs --fluvio-partitions" in refused("cluster", "import", "--fluvio-spus",
                                                  str(FLUVIO / "spu_list.json"))
