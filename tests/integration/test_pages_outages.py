"""Outage controls and the produce / records panel on the pages (no worker: settled here)."""
from __future__ import annotations

import html
import re

import pytest

from cluster.models import Event, Partition, Spu
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture(autouse=True)
def cluster(redis_url):
    from cluster.services import topic_create
    from cluster.services.waiting import wait_replicated

    for rack, ids in (("rack-a", (0, 1)), ("rack-b", (2, 3))):
        register_spus(*ids, rack=rack, online=True)
    topic_create(name="t", partitions=4, replication=3, min_lrs=2)
    assert wait_replicated("t")


def leaders() -> dict[int, int | None]:
    return dict(Partition.objects.filter(topic__name="t").values_list("index", "leader"))


def busiest_leader() -> int:
    led = [leader for leader in leaders().values() if leader is not None]
    return max(set(led), key=led.count)


def messages_of(response) -> list[str]:
    """Each message's text (an outage result's links to its moment beside it left out)."""
    return [html.unescape(re.sub(r'^<span class="message-text">(.*?)</span> <a .*$', r"\1",
                                 str(m), flags=re.S)) for m in response.context["messages"]]


def moment_links_of(response) -> list[tuple[str, str, str]]:
    link = r'href="/history/\?at=(\d+)".*href="/history/diff/\?from=(\d+)&amp;to=(\d+)"'
    return re.findall(link, str(list(response.context["messages"])[0]))


def test_an_operator_takes_an_spu_offline_and_its_partitions_elect_new_leaders(operator_client):
    spu = busiest_leader()
    led = sum(leader == spu for leader in leaders().values())
    response = operator_client.post(f"/spus/{spu}/offline/", {"next": "/"}, follow=True)
    assert response.redirect_chain == [("/", 302)]
    assert Spu.objects.get(pk=spu).resolution == "Offline"
    assert spu not in leaders().values() and None not in leaders().values()
    assert messages_of(response) == [
        f"SPU {spu} offline: {led} partition{'s' if led > 1 else ''} elected a new leader, "
        "0 left Offline."]
    # Beside it, the moment it happened and before / after, by log offsets around it.
    [(at, before, after)] = moment_links_of(response)
    assert at == after and int(before) < int(after)
    assert Event.objects.filter(actor="op", object_type="spu", object_name=str(spu),
                                operation="resolution").exists()


def test_bringing_it_back_says_no_partition_was_waiting(operator_client):
    operator_client.post("/spus/0/offline/")
    response = operator_client.post("/spus/0/online/", follow=True)
    assert response.redirect_chain == [("/spus/", 302)]
    assert Spu.objects.get(pk=0).resolution == "Online"
    assert "SPU 0 online: no leaderless partition was waiting for it." in messages_of(response)


def test_a_rack_offline_then_online_from_the_overview(operator_client):
    response = operator_client.post("/racks/rack-a/offline/", {"next": "/"}, follow=True)
    assert set(Spu.objects.filter(rack="rack-a").values_list("resolution", flat=True)) == \
        {"Offline"}
    assert not {0, 1} & set(leaders().values())
    assert messages_of(response)[0].startswith("Rack rack-a offline: ")
    assert Event.objects.filter(actor="op", object_type="rack", operation="offline").exists()
    operator_client.post("/racks/rack-a/online/")
    assert set(Spu.objects.values_list("resolution", flat=True)) == {"Online"}


def test_killing_a_loop_is_noticed_by_the_connection_manager(operator_client, settings):
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 0.3
    spu = busiest_leader()
    response = operator_client.post(f"/spus/{spu}/kill/", follow=True)
    assert Spu.objects.get(pk=spu).resolution == "Offline"
    assert spu not in leaders().values()
    assert "the connection manager saw its heartbeat stop" in messages_of(response)[0]
    assert Event.objects.filter(object_name=str(spu), operation="heartbeat-lost").exists()


@pytest.mark.parametrize("url", ["/spus/0/offline/", "/spus/0/online/", "/spus/0/kill/",
                                 "/racks/rack-a/offline/", "/racks/rack-a/online/",
                                 "/topics/t/produce/"])
def test_a_viewer_is_refused_403_and_nothing_changes(viewer_client, url):
    before = leaders()
    assert viewer_client.post(url, {"count": 1, "acks": "1", "partition": 0}).status_code == 403
    assert set(Spu.objects.values_list("resolution", flat=True)) == {"Online"}
    assert leaders() == before


def test_a_viewer_sees_no_outage_or_produce_buttons(viewer_client):
    for url in ("/", "/spus/", "/topics/t/"):
        html = viewer_client.get(url).content.decode()
        for label in ("Take offline", "Bring online", "Kill loop", "Rack offline",
                      "/produce/", "/offline/", "/online/", "/kill/"):
            assert label not in html, (url, label)
    assert "Latest committed records" in html


def test_an_operator_sees_the_buttons_on_both_pages(operator_client):
    spus, overview = (operator_client.get(u).content.decode() for u in ("/spus/", "/"))
    for html in (spus, overview):
        assert html.count('aria-label="Take SPU') == 4 and html.count(">Rack offline<") == 2
        assert 'data-confirm="Take SPU 0 offline?' in html


def test_an_unknown_rack_or_spu_gets_a_message_and_nothing_changes(operator_client):
    before, events = leaders(), Event.objects.count()
    response = operator_client.post("/racks/nowhere/offline/", follow=True)
    assert messages_of(response) == ["no SPU is in rack 'nowhere'"]
    response = operator_client.post("/spus/9/offline/", follow=True)
    assert messages_of(response) == ["SPU 9 is not registered"]
    assert leaders() == before and Event.objects.count() == events
    assert set(Spu.objects.values_list("resolution", flat=True)) == {"Online"}


def test_next_must_stay_on_this_site(operator_client):
    response = operator_client.post("/spus/0/online/", {"next": "https://evil.example/"})
    assert response["Location"] == "/spus/"


def test_produce_then_the_panel_shows_the_committed_records(operator_client):
    response = operator_client.post("/topics/t/produce/",
                                    {"partition": 1, "count": 3, "acks": "all"}, follow=True)
    assert messages_of(response) == [
        "3 records to t/1 at offsets 0–2: committed by the whole LRS."]
    assert response.redirect_chain[0][0] == "/topics/t/?partition=1#records"
    assert [r["offset"] for r in response.context["records"]["rows"]] == [2, 1, 0]


def test_uncommitted_records_show_only_when_asked(operator_client):
    from cluster.services.records import records_produce

    records_produce(topic="t", partition=0, acks="0", count=2)  # appended, not replicated yet
    committed = operator_client.get("/topics/t/").context["records"]
    everything = operator_client.get("/topics/t/?uncommitted=1").context["records"]
    assert committed["rows"] == [] and not committed["uncommitted"]
    assert [r["value"] for r in everything["rows"]] == ["record-1", "record-0"]


def test_acks_all_refused_shows_the_reason_next_to_acks(operator_client):
    operator_client.post("/racks/rack-a/offline/")
    operator_client.post("/spus/2/offline/")
    response = operator_client.post("/topics/t/produce/",
                                    {"partition": 0, "count": 1, "acks": "all"})
    assert response.status_code == 400
    errors = response.context["produce_form"].errors
    assert list(errors) == ["acks"] and "NOT_ENOUGH_REPLICAS" in errors["acks"][0]
    assert 'id="id_acks-error"' in response.content.decode()


def test_bad_produce_input_is_shown_next_to_the_field(operator_client):
    response = operator_client.post("/topics/t/produce/",
                                    {"partition": 7, "count": 0, "acks": "2"})
    assert response.status_code == 400
    assert set(response.context["produce_form"].errors) == {"partition", "count", "acks"}
