"""Issue 35.8: the rehearsal's full report is a page (not only a JSON link), and it counts
the simulated producers' acks=1 writes as /metrics does, on a row of their own (nobody
waits for their answer)."""
from __future__ import annotations

import json

import pytest

from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture
def rehearsal(redis_url, settings) -> dict:
    """A leader cut from the controller takes two acks=1 writes, then the heal truncates them."""
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 0.3
    for rack, ids in (("rack-a", (0,)), ("rack-b", (1,)), ("rack-c", (2,))):
        register_spus(*ids, rack=rack, online=True)
    run("topic", "create", "t", "--partitions", "1", "--replication", "3", "--min-lrs", "2")
    run("produce", "t", "--count", "3", "--acks", "all")
    leader = json.loads(run("partition", "list", "--topic", "t", "--json"))[0]["leader"]
    run("net", "cut", "--spu", str(leader), "--settle", "20", "--json")
    run("produce", "t", "--value", "lost-a", "--value", "lost-b", "--acks", "1", "--json")
    run("net", "heal", "--all", "--settle", "20", "--json")
    return json.loads(run("net", "report", "--json"))


def test_the_full_report_is_a_page_listing_the_truncated_acks_1_writes(viewer_client,
                                                                        rehearsal):
    page = viewer_client.get("/net/report/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "<h1>Network rehearsal</h1>" in html and "<h2>Settled</h2>" in html
    assert '<tr data-count="acks1_truncated"><th>acks=1 writes truncated' in html
    assert f"<b>{rehearsal['acks1_truncated_count']}</b>" in html
    assert rehearsal["acks1_truncated_count"] == 2
    for t in rehearsal["acks1_truncated"]:
        assert (f'<td class="num">{t["partition"]}</td><td class="num">{t["offset"]}</td>'
                f'<td class="num">{t["record"]}</td>') in html
    assert 'id="simulated-note"' in html
    assert 'records_produced{acks=&quot;1&quot;}' in html
    assert "unacknowledged writes lost" in html


def test_the_spu_page_links_the_report_page_and_labels_the_acks_1_count(viewer_client,
                                                                         rehearsal):
    html = viewer_client.get("/spus/").content.decode()
    assert 'href="/net/report/"' in html
    assert "answered acks=1 and" in html
    assert "unanswered acks=1 writes of the simulated producers" in html


def test_before_any_cut_the_page_says_there_is_no_rehearsal(viewer_client, redis_url):
    page = viewer_client.get("/net/report/")
    assert page.status_code == 200 and "No rehearsal yet" in page.content.decode()


def test_the_report_counts_the_simulated_producers_acks_1_writes_as_metrics_does(
        viewer_client, redis_url):
    from cluster.services.records import topic_set_producer_rate
    from cluster.services.replication import now_ms, replication_tick
    from cluster.services.waiting import LocalQueue
    from tests.integration.test_metrics_endpoint import sample, scrape

    for rack, ids in (("rack-a", (0,)), ("rack-b", (1,)), ("rack-c", (2,))):
        register_spus(*ids, rack=rack, online=True)
    run("topic", "create", "t", "--partitions", "3", "--replication", "3", "--min-lrs", "2")
    replication_tick(dispatch=LocalQueue())
    before = sample(scrape(viewer_client), "controlroom_records_produced_total", acks="1")
    run("net", "cut", "--spu", "2", "--from", "spu", "1", "--json")  # a rehearsal begins
    topic_set_producer_rate(name="t", rate=1000)
    at = now_ms()
    for step in range(1, 4):
        replication_tick(dispatch=LocalQueue(), now=at + step * 1000)
    topic_set_producer_rate(name="t", rate=0)
    run("produce", "t", "--count", "2", "--acks", "1", "--json")  # answered ones too
    written = sample(scrape(viewer_client), "controlroom_records_produced_total",
                     acks="1") - before
    report = json.loads(run("net", "report", "--json"))
    assert (f"simulated producers' acks=1 writes (unanswered): {report['simulated']['1']}"
            in run("net", "report"))
    assert report["acknowledged"]["1"] == 2 and report["simulated"]["1"] > 0
    assert report["acknowledged"]["1"] + report["simulated"]["1"] == written
    html = viewer_client.get("/net/report/").content.decode()
    assert (f'<tr data-count="simulated_acks_1"><th>simulated producers\' acks=1 writes '
            f'(nobody waits for the answer)</th><td class="num">{report["simulated"]["1"]}'
            ) in html
    assert f'as /metrics counts them</th><td class="num">{int(written)}</td>' in html
