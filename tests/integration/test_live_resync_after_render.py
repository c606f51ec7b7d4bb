"""A page embeds the sequence of each group its data reflects, read before the data: a change
made between the render and the socket's hello shows as a hello sequence beyond it (the page
then resyncs that group, static/js/live.js; tests/browser/test_browser_live.py drives that)."""
from __future__ import annotations

import json
import re
import time

import pytest

from tests.helpers import register_spus
from tests.live_sockets import open_socket, run_in_fresh_loop, session_cookie

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
    register_spus(0, 1, 2, rack="", online=True)
    topic_create(name="orders", partitions=3, replication=2)
    assert wait_replicated("orders")
    quiet()


def quiet(groups=("cluster", "topic-orders", "topic-orders.0"), deadline_s: float = 30) -> None:
    """Until the set-up's trailing batches went out: no sequence moves for three windows."""
    from cluster.adapters.live_batches import WINDOW_MS, current_seqs

    last, still_since, started = None, time.monotonic(), time.monotonic()
    while time.monotonic() - still_since < 3 * WINDOW_MS / 1000:
        assert time.monotonic() - started < deadline_s, "the live batches never went quiet"
        now = current_seqs(groups)
        if now != last:
            last, still_since = now, time.monotonic()
        time.sleep(WINDOW_MS / 4000)


def rendered(client, url: str) -> tuple[str, dict[str, int]]:
    """The page's socket path and the sequences it embeds."""
    html = client.get(url).content.decode()
    path = re.search(r'data-live-ws="([^"]+)"', html).group(1).replace("&amp;", "&")
    seqs = re.search(r'<script id="live-seqs" type="application/json">(.*?)</script>', html)
    return path, json.loads(seqs.group(1))


def hello_after(application, cookie: str, path: str, change=None) -> dict[str, int]:
    if change is not None:
        change()

    async def scenario():
        socket, hello = await open_socket(application, path, cookie)
        await socket.disconnect()
        return hello["groups"]

    return run_in_fresh_loop(scenario)


@pytest.mark.parametrize("url", ["/", "/spus/", "/topics/", "/heatmaps/", "/events/"])
def test_a_cluster_page_embeds_the_sequence_its_socket_will_be_greeted_with(
        application, viewer, viewer_client, orders, url):
    path, seqs = rendered(viewer_client, url)
    assert path == "/ws/cluster/"
    assert hello_after(application, session_cookie(viewer), path) == seqs


def test_a_change_between_render_and_connect_leaves_the_hello_beyond_the_render(
        application, viewer, viewer_client, orders):
    from cluster.adapters.live_batches import current_seq

    path, seqs = rendered(viewer_client, "/")
    register_spus(7, rack="", online=True)  # logged, hence staged for the cluster group
    quiet()
    groups = hello_after(application, session_cookie(viewer), path)
    assert groups["cluster"] > seqs["cluster"]
    assert groups["cluster"] == current_seq("cluster")


def test_a_topic_page_embeds_its_topic_and_block_groups(application, viewer, viewer_client,
                                                        orders):
    from cluster.adapters.live_batches import stage

    path, seqs = rendered(viewer_client, "/topics/orders/")
    assert path == "/ws/topics/orders/?first=0&count=3"
    stage("topic-orders.0", {"partitions": [{"topic": "orders", "partition": 0, "leader": 0,
                                             "lrs": [0], "hw": 9, "leo": 9,
                                             "resolution": "Online"}]})
    groups = hello_after(application, session_cookie(viewer), path)
    assert set(groups) <= set(seqs)
    assert groups["topic-orders.0"] == seqs["topic-orders.0"] + 1
    assert groups["topic-orders"] == seqs["topic-orders"]


def test_the_partitions_page_joins_the_blocks_of_its_rows_and_embeds_their_sequences(
        application, viewer, viewer_client, orders):
    path, seqs = rendered(viewer_client, "/partitions/")
    assert path == "/ws/cluster/?groups=topic-orders.0"
    assert hello_after(application, session_cookie(viewer), path) == seqs
    assert set(seqs) == {"cluster", "topic-orders.0"}
