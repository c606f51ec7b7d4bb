"""Outages from the commands, without a worker: leaders move, LRS shrinks, SPUs rejoin."""
from __future__ import annotations

import json

import pytest

from cluster.models import Event, Partition, Spu
from tests.helpers import refused, register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def partitions(topic: str = "t") -> list[dict]:
    return json.loads(run("partition", "list", "--topic", topic, "--json"))


def committed(topic: str = "t", partition: int = 0) -> list[str]:
    return [r["value"] for r in json.loads(run("consume", topic, "--partition",
                                                str(partition), "--json"))]


@pytest.fixture
def cluster(redis_url):
    for rack, ids in (("rack-a", (0, 1)), ("rack-b", (2, 3)), ("rack-c", (4, 5))):
        register_spus(*ids, rack=rack, online=True)
    run("topic", "create", "t", "--partitions", "6", "--replication", "3", "--min-lrs", "2")
    run("produce", "t", "--count", "5", "--acks", "all")


def test_spu_offline_moves_each_partition_it_led_to_an_lrs_follower(cluster):
    led = [p for p in partitions() if p["leader"] == 0]
    run("spu", "offline", "0")
    after = {p["partition"]: p for p in partitions()}
    assert led
    for before in led:
        now = after[before["partition"]]
        assert now["resolution"] == "Online"
        assert now["leader"] in before["lrs"] and now["leader"] != 0
        assert 0 not in now["lrs"] and len(now["lrs"]) == 2
    assert committed() == [f"record-{i}" for i in range(5)]


def test_the_store_mirrors_the_new_leaders_and_logs_each_status_change(cluster):
    run("spu", "offline", "0")
    rows = {p.index: p for p in Partition.objects.all()}
    for p in partitions():
        row = rows[p["partition"]]
        assert (row.leader, row.lrs, row.resolution, row.hw) == \
            (p["leader"], p["lrs"], p["resolution"], p["hw"])
        assert row.replica_status == p["replica_status"]
    moved = Event.objects.filter(object_type="partition", operation="status")
    assert moved.exists() and all("leader" in e.params or "lrs" in e.params for e in moved)


def test_a_returning_spu_rejoins_as_follower_and_catches_up(cluster):
    run("spu", "offline", "0")
    run("produce", "t", "--count", "3", "--acks", "all")
    run("spu", "online", "0")
    run("produce", "t", "--count", "1", "--acks", "all")
    p0 = partitions()[0]
    assert p0["leader"] != 0 and 0 in p0["lrs"]
    assert {r["leo"] for r in p0["replica_status"]} == {9}
    assert committed() == [f"record-{i}" for i in range(9)]


def test_rack_offline_leaves_no_leader_in_the_rack_and_online_restores_the_lrs(cluster):
    run("rack", "offline", "rack-a")
    assert set(Spu.objects.filter(rack="rack-a").values_list("resolution", flat=True)) == \
        {"Offline"}
    assert all(p["leader"] not in (0, 1) and p["resolution"] == "Online" for p in partitions())
    run("rack", "online", "rack-a")
    run("produce", "t", "--count", "1", "--acks", "all")
    assert sorted(partitions()[0]["lrs"]) == sorted(partitions()[0]["replicas"])


def test_killing_an_spu_loop_is_noticed_through_its_heartbeat(cluster, settings):
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 0.3
    led = [p["partition"] for p in partitions() if p["leader"] == 0]
    out = json.loads(run("spu", "kill", "0", "--json"))
    assert out["resolution"] == "Offline" and out["settled"] is True
    assert out["elections"] == {"touched": len(led), "elected": len(led), "offline": 0,
                                "pending": 0}
    assert Event.objects.filter(actor="connection-manager", operation="heartbeat-lost",
                                object_name="0").exists()
    assert all(partitions()[i]["leader"] != 0 for i in led)


def test_a_killed_spu_answers_nothing_until_the_connection_manager_drops_it(cluster, settings):
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 60
    run("spu", "kill", "0", "--no-wait")
    led = next(p["partition"] for p in partitions() if p["leader"] == 0)
    error = refused("produce", "t", "--partition", str(led), "--count", "1", code=1)
    assert "not responding" in str(error)
    assert Spu.objects.get(pk=0).resolution == "Online"


def test_unknown_spu_or_rack_exits_2(cluster):
    for args in (("spu", "offline", "99"), ("rack", "offline", "rack-z")):
        refused(*args)
