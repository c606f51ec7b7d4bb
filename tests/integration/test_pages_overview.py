"""Overview health, heatmap figures, events filtering."""
from __future__ import annotations

import json
import re

import pytest

from cluster.models import Partition
from tests.helpers import recount_partitions, register_spus


@pytest.fixture
def racked(db):
    from cluster.services import topic_create
    for r, rack in enumerate(["rack-a", "rack-b", "rack-c", "rack-d"]):
        register_spus(*range(r * 3, r * 3 + 3), rack=rack, online=True)
    topic_create(name="orders", partitions=12, replication=4)


def _figure(html: str, name: str) -> dict:
    return json.loads(re.search(rf'<script id="{name}" type="application/json">(.*?)</script>',
                                html, re.S).group(1))


def test_a_healthy_cluster_says_so(operator_client, racked):
    html = operator_client.get("/").content.decode()
    assert "every partition has a leader" in html


def test_health_lists_each_reason_with_a_link_to_its_filtered_list(operator_client, racked):
    from cluster.core.spus import SpuResolution
    from cluster.services import spu_set_resolution, topic_create
    spu_set_resolution(spu_id=4, resolution=SpuResolution.OFFLINE)
    Partition.objects.filter(index=0).update(leader=None, lrs=[])
    Partition.objects.filter(index=1).update(lrs=[4, 8])
    recount_partitions()
    topic_create(name="big", partitions=1, replication=20)
    html = operator_client.get("/").content.decode()
    for link, text in [("/spus/?resolution=Offline", "1 SPU offline"),
                       ("/partitions/?leaderless=1", "1 partition without a leader"),
                       ("/partitions/?under_replicated=1",
                        "2 partitions whose LRS is smaller than their replicas"),
                       ("/topics/?resolution=not-provisioned", "1 topic not Provisioned")]:
        assert f'<a href="{link}">{text}</a>' in html
    assert _rows(operator_client.get("/partitions/?leaderless=1")) == ["orders/0"]
    assert _rows(operator_client.get("/partitions/?under_replicated=1")) == ["orders/0",
                                                                            "orders/1"]
    assert 'data-spu="4"' in operator_client.get("/spus/?resolution=Offline").content.decode()
    assert "big" in operator_client.get("/topics/?resolution=not-provisioned").content.decode()


def _rows(response) -> list[str]:
    return re.findall(r'data-row="([^"]+)"', response.content.decode())


def test_overview_shows_racks_as_columns_with_leader_and_follower_counts(operator_client,
                                                                         racked):
    html = operator_client.get("/").content.decode()
    assert html.index("rack-a") < html.index("rack-b") < html.index("rack-d")
    assert "L 1</span> · F 3" in html   # 000's balanced example: 3 leaders, 9 followers per rack


def test_heatmap_numbers_match_the_store(operator_client, racked):
    html = operator_client.get("/heatmaps/").content.decode()
    leaders = _figure(html, "fig-leaders")["data"][0]
    followers = _figure(html, "fig-followers")["data"][0]
    assert leaders["y"] == ["rack-a", "rack-b", "rack-c", "rack-d"]
    for row, rack_spus in enumerate([[0, 1, 2], [3, 4, 5], [6, 7, 8], [9, 10, 11]]):
        for col, spu in enumerate(rack_spus):
            led = Partition.objects.filter(leader=spu).count()
            hosted = sum(spu in p.replicas for p in Partition.objects.all())
            assert leaders["z"][row][col] == led == 1
            assert followers["z"][row][col] == hosted - led == 3


def test_the_failover_matrix_follows_the_replica_order_within_the_lrs(operator_client, racked):
    html = operator_client.get("/heatmaps/").content.decode()
    failover = _figure(html, "fig-failover")["data"][0]
    # Partition 0 is [0, 4, 8, 9]: if SPU 0 fails, SPU 4 takes its leader.
    assert failover["z"][0][failover["x"].index("SPU 4")] == 1
    Partition.objects.filter(index=0).update(lrs=[0, 8, 9])
    recount_partitions()
    html = operator_client.get("/heatmaps/").content.decode()
    failover = _figure(html, "fig-failover")["data"][0]
    assert failover["z"][0][failover["x"].index("SPU 8")] == 1


def test_chart_builders_make_valid_plotly_figures(racked):
    import plotly.graph_objects as go
    from cluster import charts
    from cluster.selectors.stats import cluster_stats, partition_columns, replica_counts_by_topic
    stats = cluster_stats(with_failover=True)
    figures = [charts.rack_spu_heatmap(stats.racks(), "leaders"),
               charts.rack_spu_heatmap(stats.racks(), "followers"),
               charts.topic_spu_heatmap(["orders"], sorted(stats.spus),
                                        replica_counts_by_topic(partition_columns()), [1]),
               charts.failover_heatmap(stats)]
    for figure in figures:
        go.Figure(figure)  # raises on any property Plotly does not know


def test_events_filter_by_user_and_operation(operator_client, racked):
    operator_client.post("/spus/register/", {"id": 50})
    html = operator_client.get("/events/?actor=op").content.decode()
    assert set(re.findall(r'data-actor="([^"]+)" data-operation="([^"]+)"', html)) == {
        ("op", "register")}
    html = operator_client.get("/events/?operation=resolution&object_type=topic").content.decode()
    assert "<b>from</b>=Pending" in html


def test_events_show_parameters_and_result(operator_client, db):
    register_spus(0)
    operator_client.post("/new-topic/", {"name": "t", "partitions": 1, "replication": 3,
                                         "min_lrs": 1, "max_lag": 10, "action": "create"})
    html = operator_client.get("/events/?object_name=t").content.decode()
    assert "<b>replication</b>=3" in html and "need 2 more SPUs" in html
