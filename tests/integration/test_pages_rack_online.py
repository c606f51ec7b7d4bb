"""Issue 35.7 (d): "Rack online" is offered only for a rack with an SPU down, on the page as
rendered and live: the cluster group's loads carry ``racks_down`` (static/js/live.js shows
and hides the rendered forms with it)."""
from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async

from tests.helpers import register_spus
from tests.live_sockets import (as_a_shell, drain, open_socket, run_in_fresh_loop,
                                 session_cookie)

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture(autouse=True)
def cluster(redis_url):
    register_spus(0, 1, rack="rack-a", online=True)
    register_spus(2, 3, rack="rack-b", online=True)


def _offered(html: str) -> set[str]:
    """The racks whose Rack online form is shown (the others' forms are rendered hidden)."""
    forms = re.findall(r'<form [^>]*data-rack-online="([\w-]+)"([^>]*)>', html)
    return {rack for rack, rest in forms if "hidden" not in rest}


def test_no_rack_online_button_while_every_rack_is_up(operator_client):
    for url in ("/", "/spus/"):
        html = operator_client.get(url).content.decode()
        assert _offered(html) == set(), url
        assert html.count(">Rack offline<") == 2


def test_a_rack_with_an_spu_down_is_offered_rack_online_and_only_it(operator_client):
    assert operator_client.post("/spus/2/offline/", {"next": "/"}).status_code == 302
    for url in ("/", "/spus/"):
        assert _offered(operator_client.get(url).content.decode()) == {"rack-b"}, url
    assert operator_client.post("/racks/rack-b/online/", {"next": "/"}).status_code == 302
    assert _offered(operator_client.get("/").content.decode()) == set()


@pytest.fixture
def application(redis_url):
    from channels.layers import channel_layers
    channel_layers.backends.clear()  # rebuild the layer on the test Redis
    from webapp.asgi import application
    return application


def _racks_down_heard(application, user, change) -> list[list[str]]:
    """Every ``racks_down`` the cluster group sent while ``change`` ran, in order."""
    cookie = session_cookie(user)

    async def scenario():
        socket, _ = await open_socket(application, "/ws/cluster/", cookie)
        await sync_to_async(as_a_shell(change), thread_sensitive=False)()
        got = await drain(socket)
        await socket.disconnect()
        return got

    return [m["racks_down"] for m in run_in_fresh_loop(scenario) if "racks_down" in m]


@pytest.mark.django_db(transaction=True)
def test_the_live_loads_offer_rack_online_as_a_rack_goes_down_and_withdraw_it_as_it_comes_up(
        application, viewer):
    from cluster.services.outages import rack_online, settle_outage, spu_offline

    down = _racks_down_heard(application, viewer,
                             lambda: settle_outage(spu_offline(spu_id=2)))
    assert down and down[-1] == ["rack-b"], down
    up = _racks_down_heard(application, viewer,
                           lambda: settle_outage(rack_online(rack="rack-b")))
    assert up and up[-1] == [], up


@pytest.mark.django_db(transaction=True)
def test_the_cluster_snapshot_names_the_racks_down(viewer_client):
    from cluster.services.outages import settle_outage, spu_offline

    assert viewer_client.get("/api/live/snapshot/", {"group": "cluster"}).json()[
        "racks_down"] == []
    settle_outage(spu_offline(spu_id=0))
    assert viewer_client.get("/api/live/snapshot/", {"group": "cluster"}).json()[
        "racks_down"] == ["rack-a"]
