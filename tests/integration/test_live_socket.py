"""The live socket: who may connect, which groups a page joins, and paths no page uses."""
from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator

from tests.live_sockets import open_socket, run_in_fresh_loop, session_cookie, socket_headers

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def application(redis_url):
    from channels.layers import channel_layers
    channel_layers.backends.clear()  # rebuild the layer on the test Redis
    from webapp.asgi import application
    return application


def test_the_hello_names_the_cluster_group_and_its_current_sequence(application, operator):
    from cluster.adapters.live_batches import next_seq
    next_seq("cluster"), next_seq("cluster")

    cookie = session_cookie(operator)

    async def scenario():
        socket, hello = await open_socket(application, "/ws/cluster/", cookie)
        await socket.disconnect()
        return hello

    assert run_in_fresh_loop(scenario) == {"type": "live.hello", "v": 1, "groups": {"cluster": 2}}


def test_a_topic_page_joins_its_topic_and_the_blocks_of_the_partitions_it_shows(application,
                                                                                 viewer):
    cookie = session_cookie(viewer)

    async def scenario():
        socket, hello = await open_socket(
            application, "/ws/topics/orders/?first=200&count=400", cookie)
        await socket.disconnect()
        return hello

    groups = run_in_fresh_loop(scenario)["groups"]
    assert list(groups) == ["topic-orders", "topic-orders.1", "topic-orders.2"]


def test_a_cluster_page_may_add_the_block_groups_of_the_rows_it_lists(application, viewer):
    cookie = session_cookie(viewer)

    async def scenario():
        socket, hello = await open_socket(
            application, "/ws/cluster/?groups=topic-orders.0%2Ctopic-audit.3,topic-orders.0",
            cookie)
        await socket.disconnect()
        return hello

    groups = run_in_fresh_loop(scenario)["groups"]
    assert list(groups) == ["cluster", "topic-orders.0", "topic-audit.3"]


def test_a_topic_page_without_a_range_joins_the_first_block(application, viewer):
    cookie = session_cookie(viewer)

    async def scenario():
        socket, hello = await open_socket(application, "/ws/topics/orders/", cookie)
        await socket.disconnect()
        return hello

    assert list(run_in_fresh_loop(scenario)["groups"]) == ["topic-orders", "topic-orders.0"]


@pytest.mark.parametrize("path", ["/ws/topics/..%2F/", "/ws/topics/Bad_Name/", "/ws/nowhere/",
                                  "/not-a-socket", "/ws/cluster/?groups=topic-Bad_Name.0",
                                  "/ws/cluster/?groups=topic-orders",
                                  "/ws/cluster/?groups=cluster",
                                  "/ws/cluster/?groups=" + ",".join(
                                      f"topic-t{i}.0" for i in range(101))])
def test_a_path_no_page_uses_is_closed_with_4404(application, operator, path):
    headers = socket_headers(session_cookie(operator))

    async def scenario():
        socket = WebsocketCommunicator(application, path, headers=headers)
        return await socket.connect()

    assert run_in_fresh_loop(scenario) == (False, 4404)


def test_the_socket_tells_its_page_each_groups_sequence_every_beacon(application, viewer,
                                                                     settings):
    """A message numbered and then lost (its sender killed before it went out) shows in the
    next beacon, which the page resyncs from (static/js/live.js)."""
    from asgiref.sync import sync_to_async

    from cluster.adapters.live_batches import next_seq
    settings.LIVE_BEACON_S = 0.2
    cookie = session_cookie(viewer)

    async def scenario():
        socket, hello = await open_socket(application, "/ws/topics/orders/", cookie)
        await sync_to_async(next_seq)("topic-orders.0")  # numbered, never sent
        beacons = []
        while not beacons or beacons[-1]["groups"]["topic-orders.0"] <= hello["groups"][
                "topic-orders.0"]:
            beacons.append(await socket.receive_json_from(timeout=30))
        await socket.disconnect()
        return hello, beacons

    hello, beacons = run_in_fresh_loop(scenario)
    assert {b["type"] for b in beacons} == {"live.seqs"}
    assert beacons[-1] == {"type": "live.seqs", "v": 1, "groups": {
        "topic-orders": hello["groups"]["topic-orders"],
        "topic-orders.0": hello["groups"]["topic-orders.0"] + 1}}


def test_no_beacon_is_sent_when_turned_off(application, viewer, settings):
    settings.LIVE_BEACON_S = 0
    cookie = session_cookie(viewer)

    async def scenario():
        socket, _ = await open_socket(application, "/ws/cluster/", cookie)
        quiet = await socket.receive_nothing(timeout=1.0, interval=0.05)
        await socket.disconnect()
        return quiet

    assert run_in_fresh_loop(scenario) is True
