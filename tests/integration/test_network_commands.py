"""Network cuts through the commands and the API, in process without a worker (the
engine steps here): sessions expire, a deposed leader takes acks=1 writes that the heal
truncates and reports, cuts and heals are metadata-log entries, viewers are refused."""
from __future__ import annotations

import json

import pytest
from django.test import Client
from rest_framework.test import APIClient

from cluster.adapters import hot_state
from cluster.models import Event, Spu
from tests.helpers import refused, register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture
def cluster(redis_url, settings):
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 0.3
    for rack, ids in (("rack-a", (0,)), ("rack-b", (1,)), ("rack-c", (2,))):
        register_spus(*ids, rack=rack, online=True)
    run("topic", "create", "t", "--partitions", "1", "--replication", "3", "--min-lrs", "2")
    run("produce", "t", "--count", "3", "--acks", "all")
    return json.loads(run("partition", "list", "--topic", "t", "--json"))[0]["leader"]


def _produce(acks: str, *values: str) -> dict:
    args = [a for v in values for a in ("--value", v)]
    return json.loads(run("produce", "t", *args, "--acks", acks, "--json"))


def _metadata_types() -> list[str]:
    return [e["type"] for e in json.loads(run("metadata", "dump", "--json"))]


def test_a_leader_cut_from_the_controller_is_deposed_and_its_acks_1_writes_are_reported(cluster):
    leader = cluster
    out = json.loads(run("net", "cut", "--spu", str(leader), "--settle", "20", "--json"))
    assert out["settled"] and json.loads(run("net", "status", "--json"))[0]["spus"] == [leader]
    assert Spu.objects.get(pk=leader).resolution == "Offline"
    deposed = _produce("1", "lost-a", "lost-b")  # the producers still reach the old leader
    error = refused("produce", "t", "--value", "x", "--acks", "all", code=1)
    assert "acks=all cannot be acknowledged" in str(error)
    healed = json.loads(run("net", "heal", "--all", "--settle", "20", "--json"))
    assert healed["rejoined"] == [leader] and json.loads(run("net", "status", "--json")) == []
    report = json.loads(run("net", "report", "--json"))
    assert [t["offset"] for t in report["acks1_truncated"]] == [deposed["base_offset"],
                                                                 deposed["base_offset"] + 1]
    assert report["refused_total"] == 1 and report["settled"]
    assert {"net-cut", "net-heal", "truncation"} <= set(_metadata_types())
    assert Event.objects.filter(object_type="network", operation="cut").exists()
    values = [r["value"] for r in json.loads(run("consume", "t", "--json"))]
    assert values[:3] == ["record-0", "record-1", "record-2"] and "lost-a" not in values


def test_bad_cuts_are_refused_and_the_api_cuts_and_heals_for_operators_only(cluster, api,
                                                                            viewer):
    for bad in (["--spu", "9"], ["--spu", "0", "--from", "spu"],
                ["--spu", "0", "--from", "spu", "0"], ["--racks", "rack-a+rack-b+rack-c"],
                ["--racks", "nowhere"]):
        refused("net", "cut", *bad)  # exit 2, nothing cut
    refused("net", "heal")
    assert json.loads(run("net", "status", "--json")) == []
    watcher = APIClient()
    watcher.force_authenticate(viewer)
    assert watcher.post("/api/net/cuts/", {"spu": 1}, format="json").status_code == 403
    assert watcher.post("/api/net/heal/", {"all": True}, format="json").status_code == 403
    made = api.post("/api/net/cuts/", {"racks": "rack-a"}, format="json")
    assert made.status_code == 200 and made.json()["kind"] == "racks"
    assert watcher.get("/api/net/cuts/").json()[0]["spus"] == [0]
    matrix = watcher.get("/api/net/matrix/").json()
    assert matrix["rows"][0]["cells"][matrix["ends"].index("controller")] == "cut"
    assert api.post("/api/net/cuts/", {"spu": 7}, format="json").status_code == 404
    assert api.post("/api/net/heal/", {"all": True}, format="json").json()["in_force"] == 0
    assert hot_state.load(keys=[]).state.cuts == []


def test_an_inbound_one_way_cut_keeps_the_session_and_the_matrix_says_in_cut(cluster, api):
    refused("net", "cut", "--spu", "1", "--inbound")  # exit 2: inbound goes with --one-way
    cut = json.loads(run("net", "cut", "--spu", "1", "--one-way", "--inbound", "--settle", "1",
                         "--json"))
    assert cut["inbound"] and cut["label"] == "SPU 1 <-/- controller" and cut["settled"]
    assert Spu.objects.get(pk=1).resolution == "Online"  # its heartbeats still arrive
    matrix = api.get("/api/net/matrix/").json()
    assert matrix["rows"][1]["cells"][matrix["ends"].index("controller")] == "in-cut"
    made = api.post("/api/net/cuts/", {"spu": 2, "source": "producers", "one_way": True,
                                       "inbound": True}, format="json").json()
    assert made["label"] == "SPU 2 <-/- producers"
    assert api.post("/api/net/cuts/", {"spu": 2, "inbound": True},
                    format="json").status_code == 400


def test_a_rehearsal_under_sharded_ticks_says_its_counts_are_incomplete(cluster, settings):
    from cluster.services.network import CutRequest, net_cut, net_report
    settings.REPLICATION_SHARDS = 2  # the cut's unit sees it; shard units never save the meta
    net_cut(request=CutRequest(2, "producers"), by="test")
    assert net_report()["counts_complete"] is False
    assert "COUNTS INCOMPLETE" in run("net", "report")


def test_the_spu_and_overview_pages_show_the_link_matrix_and_refuse_viewers_a_cut(
        cluster, operator_client, viewer):
    viewer_client = Client()
    viewer_client.force_login(viewer)
    answer = operator_client.post("/net/cut/", {"spu": "2", "source": "producers",
                                                "next": "/spus/"})
    assert answer.status_code == 302
    for page in ("/", "/spus/"):
        html = viewer_client.get(page).content.decode()
        assert "SPU 2 -/- producers" in html and 'class="net-cut"' in html
        assert 'action="/net/cut/"' not in html  # no controls for a viewer
    assert viewer_client.post("/net/heal/").status_code == 403
    assert json.loads(run("net", "status", "--json"))[0]["kind"] == "producers"


def test_a_split_of_two_named_racks_cuts_exactly_those_two(cluster):
    """``--racks rack-a,rack-b`` cuts rack-a from rack-b; rack-c still reaches both."""
    out = json.loads(run("net", "cut", "--racks", "rack-a,rack-b", "--json"))
    (cut,) = json.loads(run("net", "status", "--json"))
    assert (cut["spus"], cut["peers"], cut["racks"]) == ([0], [1], ["rack-a", "rack-b"])
    assert cut["label"] == out["label"] == "racks rack-a -/- rack-b"
    from cluster.core.replication import links

    state = hot_state.load().state
    assert links.blocked(state, 0, 1) and links.blocked(state, 1, 0)
    assert not links.blocked(state, 0, 2) and not links.blocked(state, 2, 0)
    assert not links.blocked(state, 1, 2)


def test_a_group_against_the_rest_still_cuts_it_from_every_other_rack(cluster):
    run("net", "cut", "--racks", "rack-a")
    (cut,) = json.loads(run("net", "status", "--json"))
    assert (cut["spus"], cut["peers"]) == ([0], [1, 2]) and cut["label"].endswith("the rest")
