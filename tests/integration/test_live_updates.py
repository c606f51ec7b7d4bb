"""Channels: a published payload reaches a logged-in socket; anonymous sockets are refused."""
from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator

from tests.live_sockets import run_in_fresh_loop

pytestmark = pytest.mark.redis


def _headers(cookie: str = "") -> list[tuple[bytes, bytes]]:
    headers = [(b"origin", b"http://testserver"), (b"host", b"testserver")]
    return headers + ([(b"cookie", cookie.encode())] if cookie else [])


def _session_cookie(user) -> str:
    from django.conf import settings
    from django.test import Client
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


@pytest.fixture
def application(redis_url):
    from channels.layers import channel_layers
    channel_layers.backends.clear()  # rebuild the layer on the test Redis
    from webapp.asgi import application
    return application


def test_a_published_message_reaches_a_connected_operator(application, transactional_db,
                                                          operator):
    from asgiref.sync import sync_to_async

    from cluster.adapters.live_batches import publish
    from cluster.live import ClusterChanged, PartitionChanged, topic_group
    cookie = _session_cookie(operator)

    async def scenario() -> tuple[dict, dict]:
        cluster = WebsocketCommunicator(application, "/ws/cluster/", headers=_headers(cookie))
        topic = WebsocketCommunicator(application, "/ws/topics/orders/", headers=_headers(cookie))
        assert (await cluster.connect())[0] and (await topic.connect())[0]
        for socket in (cluster, topic):
            assert (await socket.receive_json_from(timeout=30))["type"] == "live.hello"
        await sync_to_async(publish)("cluster", ClusterChanged(
            type="cluster.changed", object_type="spu", object_name="4", operation="resolution"))
        await sync_to_async(publish)(topic_group("orders"), PartitionChanged(
            type="partition.changed", topic="orders", partition=0, leader=8, lrs=[8, 9],
            hw=3, leo=4, resolution="Online"))
        got = await cluster.receive_json_from(timeout=30), await topic.receive_json_from(timeout=30)
        assert await cluster.receive_nothing(timeout=0.2)  # the topic message stayed in its group
        await cluster.disconnect()
        await topic.disconnect()
        return got

    on_cluster, on_topic = run_in_fresh_loop(scenario)
    assert on_cluster["object_name"] == "4" and on_cluster["type"] == "cluster.changed"
    assert on_topic["leader"] == 8 and on_topic["lrs"] == [8, 9]


def test_an_anonymous_socket_is_refused(application, transactional_db):
    async def scenario() -> tuple[bool, object]:
        socket = WebsocketCommunicator(application, "/ws/cluster/", headers=_headers())
        connected, code = await socket.connect()
        # Let the refused consumer finish inside the loop: left pending, asyncio.run's
        # closing cancellation of it once hung the test's thread (and the suite) for good.
        await socket.disconnect()
        return connected, code

    connected, code = run_in_fresh_loop(scenario)
    assert connected is False and code == 4401


def test_a_signed_in_user_in_no_group_gets_no_socket(application, transactional_db,
                                                     django_user_model):
    nobody = django_user_model.objects.create_user("nobody", password="nobody-pass-123")
    cookie = _session_cookie(nobody)

    async def scenario() -> tuple[bool, object]:
        socket = WebsocketCommunicator(application, "/ws/cluster/", headers=_headers(cookie))
        connected, code = await socket.connect()
        # Let the refused consumer finish inside the loop: left pending, asyncio.run's
        # closing cancellation of it once hung the test's thread (and the suite) for good.
        await socket.disconnect()
        return connected, code

    connected, code = run_in_fresh_loop(scenario)
    assert connected is False and code == 4403
