"""Pages an operator can trust (issue 19): SPUs that serve nothing are marked, numbers read
as people read them, the preview shows idle SPUs, and small page faults are gone."""
from __future__ import annotations

import json
import logging
import re

import pytest

from cluster.models import Event, Spu
from tests.helpers import register_spus


@pytest.fixture
def racked(db):
    from cluster.services import topic_create
    for r, rack in enumerate(["rack-a", "rack-b", "rack-c", "rack-d"]):
        register_spus(*range(r * 3, r * 3 + 3), rack=rack, online=True)
    topic_create(name="orders", partitions=20, replication=3)


def _figure(html: str, name: str) -> dict:
    return json.loads(re.search(rf'<script id="{name}" type="application/json">(.*?)</script>',
                                html, re.S).group(1))


def _offline(spu_id: int) -> None:
    from cluster.core.spus import SpuResolution
    from cluster.services import spu_set_resolution
    spu_set_resolution(spu_id=spu_id, resolution=SpuResolution.OFFLINE)


# ---- 1. SPUs that serve nothing ------------------------------------------------------

def test_an_offline_spu_is_a_grey_cell_of_its_own_not_the_darkest_load_cell(
        operator_client, racked):
    _offline(4)
    html = operator_client.get("/heatmaps/").content.decode()
    followers = _figure(html, "fig-followers")
    load, down = followers["data"]
    cells = {cell[0]: (r, c) for r, row in enumerate(load["customdata"])
             for c, cell in enumerate(row) if cell[0] is not None}
    r, c = cells[4]
    assert load["z"][r][c] is None and down["z"][r][c] == 1
    assert down["text"][r][c] == "SPU 4<br>OFFLINE" and down["showscale"] is False
    # Every serving SPU is a load cell and no grey one.
    assert all(load["z"][i][j] is not None and down["z"][i][j] is None
               for spu, (i, j) in cells.items() if spu != 4)
    topics = _figure(html, "fig-topics")["data"][0]
    assert "SPU 4 (offline)" in topics["x"] and "SPU 5" in topics["x"]
    assert "SPU 4 (offline)" in _figure(html, "fig-failover")["data"][0]["y"]


def test_a_healthy_cluster_draws_no_grey_trace(operator_client, racked):
    html = operator_client.get("/heatmaps/").content.decode()
    assert len(_figure(html, "fig-leaders")["data"]) == 1


def test_the_chart_builders_stay_valid_plotly_with_spus_down(racked):
    import plotly.graph_objects as go
    from cluster import charts
    from cluster.selectors.stats import cluster_stats
    _offline(0)
    stats = cluster_stats(with_failover=True)
    stats.spus[5].loop_killed = True
    for figure in (charts.rack_spu_heatmap(stats.racks(), "leaders"),
                   charts.failover_heatmap(stats)):
        go.Figure(figure)  # raises on any property Plotly does not know
    assert stats.spus[5].down and stats.spus[5].state_label == "loop killed"


def test_the_overview_marks_an_offline_spu_and_offers_bring_online_only(operator_client,
                                                                        racked):
    _offline(4)
    html = operator_client.get("/").content.decode()
    li = re.search(r'<li class="spu offline spu-down" data-spu="4"[^>]*>(.*?)</li>', html,
                   re.S).group(1)
    assert re.search(r'data-cell="status">offline · \d+ replicas not served<', li)
    # Both sets are in the page (a live update switches them); CSS shows the down set.
    assert li.index('class="when-up"') < li.index('class="when-down"')
    assert re.search(r'<li class="spu online spu-up" data-spu="5"', html)


# ---- 2. A second tab's stale button ------------------------------------------------------

def test_take_offline_on_an_offline_spu_says_it_already_is_and_logs_nothing(
        operator_client, racked):
    _offline(4)
    events = Event.objects.count()
    response = operator_client.post("/spus/4/offline/", {"next": "/"}, follow=True)
    assert [str(m) for m in response.context["messages"]] == [
        "SPU 4 is already offline: nothing changed."]
    assert Event.objects.count() == events
    assert Spu.objects.get(pk=4).resolution == "Offline"


# ---- 3. Numbers for people ---------------------------------------------------------------

@pytest.mark.parametrize("value, text", [(0, "0 bytes"), (1, "1 byte"), (1023, "1,023 bytes"),
                                         (1536, "1.5 KiB"), (5 * 1024 ** 2, "5 MiB"),
                                         (123 * 1024 ** 3, "123 GiB"), (None, "–")])
def test_bytes_read_in_binary_units(value, text):
    from cluster.templatetags.numbers import human_bytes
    assert human_bytes(value) == text


def test_ratios_are_rounded_and_whole_numbers_stay_whole():
    from cluster.templatetags.numbers import ratio
    assert (ratio(1.1666666666666667), ratio(3), ratio(None)) == ("1.17", "3", "–")


def test_leader_skew_is_judged_against_the_most_even_spread_20_partitions_allow(
        operator_client, racked):
    # 20 leaders on 12 SPUs: 1 or 2 each is as even as it gets (-40% / +20% of 1.67).
    html = operator_client.get("/spus/").content.decode()
    cells = re.findall(r'<td class="num ([\w-]+)" data-cell="leader_skew">([^<]*)</td>', html)
    assert len(cells) == 12 and {text for _, text in cells} <= {"-40%", "+20%"}
    assert {css for css, _ in cells} == {"skew-ok"}


def test_a_skew_beyond_the_even_spread_is_still_coloured():
    from cluster.selectors.stats import even_range
    from cluster.views.tables import skew_cell
    even = even_range(60, 12)  # 5 each
    assert skew_cell(0.0, 5, even).css == "skew-ok"
    assert skew_cell(0.2, 6, even).css == "skew-warn"   # one off: a nudge
    assert skew_cell(0.4, 7, even).css == "skew-bad"    # two off, 40% of the average


def test_event_times_are_time_elements_the_page_shows_in_local_time(operator_client, racked):
    html = operator_client.get("/events/").content.decode()
    stamp = re.search(r'<time datetime="([^"]+)" title="([^"]+) UTC">', html)
    assert stamp.group(1).endswith("+00:00") and "Time (UTC)" not in html
    assert "js/time.js" in html


def test_a_grid_shows_bytes_in_binary_units_rounded_ratios_and_what_each_metric_means(
        operator_client, racked):
    from planner.models import PlanGrid
    metrics = {"replicas_moved": 7, "bytes_moved": 3 * 1024 ** 2, "leader_spread": 1,
               "moved_to_lower_bound": 1.1666666666666667, "replica_spread": 1,
               "rack_violations": 0, "failover_concentration": 0.5}
    grid = PlanGrid.objects.create(created_by="op", engine="local", state="done",
                                   scenarios=[{"name": "as is"}], options={},
                                   rows=[{"index": 0, "scenario": "as is", **metrics,
                                          "kafka": {**metrics,
                                                    "bytes_moved": 9 * 1024 ** 2}}])
    html = operator_client.get(f"/planner/grids/{grid.pk}/").content.decode()
    assert "3 MiB" in html and "9 MiB" in html and "1.17" in html
    assert "1.1666666666666667" not in html and "3145728<" not in html
    help_list = html[html.index('id="metric-help"'):]
    assert "<dt>failover concentration</dt>" in help_list
    assert "<dt>replica spread</dt>" in help_list and "as even as it gets" in help_list


# ---- 4. The preview's per-SPU table ------------------------------------------------------

def test_the_preview_lists_the_spus_a_map_leaves_out(operator_client, racked):
    response = operator_client.post("/new-topic/", {
        "name": "small", "partitions": 2, "replication": 2, "min_lrs": 1, "max_lag": 1000,
        "action": "preview"})
    html = response.content.decode()
    used = {int(s) for reps in re.findall(r'data-replicas="([\d,]+)"', html)
            for s in reps.split(",")}
    table = html.split("Leaders and followers per SPU")[1]
    rows = re.findall(r'<tr data-spu="(\d+)"( class="unused")?>', table)
    assert [int(spu) for spu, _ in rows] == list(range(12))
    assert {int(spu) for spu, unused in rows if unused} == set(range(12)) - used
    assert len(used) <= 4
    assert "gets no replica" in table


# ---- 8. Small faults ---------------------------------------------------------------------

def test_the_favicon_is_served_to_anyone(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    assert response.content.startswith(b"<svg")


def test_a_viewer_on_new_topic_gets_a_403_page_and_no_traceback_in_the_log(viewer_client,
                                                                           caplog):
    with caplog.at_level(logging.WARNING, logger="django.request"):
        response = viewer_client.get("/new-topic/")
    assert response.status_code == 403 and b"This needs the operator role" in response.content
    assert [r.getMessage() for r in caplog.records] == ["Forbidden: /new-topic/"]
    assert all(r.exc_info is None for r in caplog.records)


def test_an_event_with_300_spus_in_its_parameters_is_summarised_on_the_page(operator_client,
                                                                           racked):
    from cluster.services.events import log_event
    log_event("op", "plan", 1, "create", {"add_spus": list(range(300)), "name": "x" * 500})
    html = operator_client.get("/events/").content.decode()
    row = re.search(r'<tr data-actor="op" data-operation="create">(.*?)</tr>', html, re.S)
    params = row.group(1)
    assert "<b>add_spus</b>=[0, 1, 2, 3, 4, 5, 6, 7, … 292 more]" in params
    assert "x" * 79 + "…" in params and "x" * 81 not in params
    assert "299" not in params


def test_a_replica_on_an_offline_spu_is_struck_out_where_partitions_are_listed(
        operator_client, racked):
    _offline(4)
    for url in ("/partitions/?spu=4", "/topics/orders/"):
        html = operator_client.get(url).content.decode()
        spans = re.findall(r'<span class="replica([^"]*)" data-spu="(\d+)"', html)
        assert spans and {int(spu) for css, spu in spans if "spu-down" in css} == {4}, url
        assert all("spu-down" in css for css, spu in spans if spu == "4")


def test_a_killed_loop_greys_its_spu_and_is_a_health_reason_before_its_heartbeat_lapses(
        operator_client, racked, monkeypatch):
    # The hot state's killed set, as spu_kill leaves it (the store still says Online).
    monkeypatch.setattr("cluster.selectors.stats.killed_loops", lambda: {6})
    html = operator_client.get("/").content.decode()
    assert re.search(r'<li class="spu online spu-down" data-spu="6"', html)
    assert re.search(r'data-cell="status">loop killed · \d+ replicas not served<', html)
    assert "1 SPU with a killed loop (no heartbeat: Offline once it lapses)" in html
