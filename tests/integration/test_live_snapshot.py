"""Resync: a page that sees a gap (or reconnects) fetches one JSON snapshot and continues from it;
a leader change reaches the topic's block group and the cluster group as data."""
from __future__ import annotations

import time

import pytest
from asgiref.sync import sync_to_async

from tests.helpers import register_spus
from tests.live_sockets import drain, open_socket, run_in_fresh_loop, session_cookie

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def application(redis_url):
    from channels.layers import channel_layers
    channel_layers.backends.clear()  # rebuild the layer on the test Redis
    from webapp.asgi import application
    return application


@pytest.fixture
def orders(redis_url):
    from cluster.services.waiting import wait_replicated
    from cluster.models import ClusterState
    from cluster.services import topic_create

    ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
    for rack, ids in (("rack-a", (0, 1)), ("rack-b", (2, 3)), ("rack-c", (4, 5))):
        register_spus(*ids, rack=rack, online=True)
    topic_create(name="orders", partitions=6, replication=3, min_lrs=2)
    assert wait_replicated("orders")


def snapshot(client, group: str) -> dict:
    response = client.get("/api/live/snapshot/", {"group": group})
    assert response.status_code == 200, response.content
    return response.json()


def test_a_block_snapshot_lists_each_partition_as_the_hot_state_holds_it(viewer_client, orders):
    from cluster.models import Partition

    got = snapshot(viewer_client, "topic-orders.0")
    stored = {p.index: (p.leader, p.lrs, p.resolution) for p in Partition.objects.all()}
    assert got["type"] == "live.snapshot" and got["v"] == 1 and got["group"] == "topic-orders.0"
    assert {r["partition"]: (r["leader"], r["lrs"], r["resolution"])
            for r in got["partitions"]} == stored


def test_the_cluster_snapshot_carries_spu_loads_totals_and_the_heatmaps(viewer_client, orders):
    got = snapshot(viewer_client, "cluster")
    assert sum(s["leaders"] for s in got["spus"]) == 6
    assert got["totals"]["partitions"] == 6 and got["totals"]["spus_online"] == 6
    assert set(got["charts"]) == {"chart-leaders", "chart-followers", "chart-topics",
                                  "chart-failover"}
    assert [t["name"] for t in got["topics"]] == ["orders"]
    assert (got["totals"]["racks"], got["totals"]["topics"]) == (3, 1)


def test_the_cluster_snapshot_restores_topic_counts_health_and_the_topic_heatmap(
        viewer_client, orders):
    from cluster.models import Partition
    from cluster.services.outages import settle_outage, spu_offline

    settle_outage(spu_offline(spu_id=0))
    got = snapshot(viewer_client, "cluster")
    rows = list(Partition.objects.values_list("leader", "lrs", "replicas", "initial_leader"))
    (topic,) = got["topics"]
    assert topic["partitions"] == 6
    assert topic["leaderless"] == sum(leader is None for leader, *_ in rows)
    assert topic["under_replicated"] == sum(len(lrs) < len(reps) for _, lrs, reps, _ in rows) > 0
    assert topic["preferred_leading"] == sum(lead == first for lead, _, _, first in rows) < 6
    assert got["totals"]["preferred_leading"] == topic["preferred_leading"]
    assert {"message": "1 SPU offline", "link": "/spus/?resolution=Offline",
            "severity": "bad"} in got["health"]
    assert any("LRS is smaller" in r["message"] for r in got["health"])
    heatmap = got["charts"]["chart-topics"]["data"][0]
    on_spu = dict(zip(heatmap["x"], heatmap["z"][0]))
    assert heatmap["y"] == ["orders"] and sum(on_spu.values()) == 18
    # The offline SPU's column says so: its replicas are held, not served.
    assert on_spu["SPU 0 (offline)"] == sum(0 in reps for _, _, reps, _ in rows)


def test_the_cluster_snapshot_gives_each_spu_its_skew_and_share_cells_as_the_spu_page_does(
        viewer_client, orders):
    import re

    from cluster.services.outages import settle_outage, spu_offline

    settle_outage(spu_offline(spu_id=0))
    got = {s["id"]: s for s in snapshot(viewer_client, "cluster")["spus"]}
    page = viewer_client.get("/spus/").content.decode()
    for spu_id, row in got.items():
        tr_match = re.search(rf'<tr data-spu="{spu_id}" class="([\w-]+)"[^>]*>(.*?)</tr>',
                             page, re.S)
        assert tr_match.group(1) == row["cells"]["status"]["css"], spu_id
        tr = tr_match.group(2)
        for name in ("leader_skew", "replica_skew"):
            cell = re.search(rf'<td class="num ([\w-]+)" data-cell="{name}">([^<]*)</td>', tr)
            assert row["cells"][name] == {"css": cell.group(1), "text": cell.group(2)}, spu_id
        share = re.search(r'data-cell="preferred_share"><span data-cell-text>([^<]*)<', tr)
        assert row["cells"]["preferred_share"]["text"] == share.group(1)
    # Offline, SPU 0 cannot lead: its row is marked down, its leader count not judged.
    assert got[0]["leaders"] == 0 and got[0]["cells"]["leader_skew"]["css"] == "muted"
    held = got[0]["replicas"]
    assert got[0]["cells"]["status"] == {"css": "spu-down",
                                         "text": f"offline · {held} replicas not served"}
    assert sum(s["preferred"] for s in got.values()) == 6


@pytest.mark.parametrize("group", ["", "topics", "topic-Bad_Name", "topic-orders.x",
                                   "topic-orders.²"])
def test_a_group_no_page_joins_is_refused_with_a_json_error(viewer_client, redis_url, group):
    response = viewer_client.get("/api/live/snapshot/", {"group": group})
    assert response.status_code == 400
    assert set(response.json()) == {"error", "details"} and "group" in response.json()["details"]


def test_an_anonymous_visitor_gets_no_snapshot(client, redis_url):
    assert client.get("/api/live/snapshot/", {"group": "cluster"}).status_code == 403


def test_after_a_gap_the_snapshot_holds_the_lost_state_and_the_next_message_follows_it(
        application, viewer, viewer_client, redis_url):
    from cluster.adapters.live_batches import current_seq, next_seq, stage
    row = {"topic": "quiet", "partition": 0, "leader": 1, "lrs": [1], "hw": 0, "leo": 0,
           "resolution": "Online"}
    group = "topic-quiet.0"
    cookie = session_cookie(viewer)

    def lost_then_next() -> None:
        next_seq(group)  # a message this page never got: the sequence moved on without it
        stage(group, {"partitions": [{**row, "hw": 1}]})

    async def scenario():
        socket, hello = await open_socket(application, "/ws/topics/quiet/", cookie)
        await sync_to_async(lost_then_next, thread_sensitive=False)()
        got = await drain(socket)
        await socket.disconnect()
        return hello, got

    hello, got = run_in_fresh_loop(scenario)
    start = hello["groups"][group]
    assert got[0]["seq"] == start + 2, "the page sees a gap of one"
    snap = snapshot(viewer_client, group)
    assert snap["seq"] == start + 2
    assert snap["partitions"] == [] and snap["seq"] >= got[-1]["seq"]
    time.sleep(0.3)  # the window frees once a flush finds nothing
    stage(group, {"partitions": [{**row, "hw": 2}]})
    assert current_seq(group) == snap["seq"] + 1, "the next message continues from the snapshot"


def test_a_leader_taken_offline_reaches_both_groups_as_data(application, viewer, orders):
    from cluster.models import Partition
    from cluster.services.outages import settle_outage, spu_offline

    spu = Partition.objects.filter(index=0).values_list("leader", flat=True).get()
    cookie = session_cookie(viewer)

    def offline() -> None:
        settle_outage(spu_offline(spu_id=spu))

    async def scenario():
        cluster, _ = await open_socket(application, "/ws/cluster/", cookie)
        topic, _ = await open_socket(application, "/ws/topics/orders/", cookie)
        await sync_to_async(offline, thread_sensitive=False)()
        got = await drain(cluster), await drain(topic)
        await cluster.disconnect()
        await topic.disconnect()
        return got

    on_cluster, on_topic = run_in_fresh_loop(scenario)
    leaders = {r["partition"]: r["leader"] for m in on_topic for r in m.get("partitions", [])}
    assert leaders[0] not in (spu, None)
    spus = {s["id"]: s for m in on_cluster for s in m.get("spus", [])}
    assert spus[spu]["resolution"] == "Offline" and spus[spu]["leaders"] == 0
    assert any(m.get("charts") for m in on_cluster)
    # The charts can come in a message of their own, without events (docs/live.md).
    assert any(e["object_name"] == str(spu) for m in on_cluster for e in m.get("events", []))
