"""The link matrix is live: a cut, a session expiring and a heal reach the cluster group as
data (``net``: the matrix and the rehearsal summary), and the cluster snapshot a page
resyncs from carries the same view."""
from __future__ import annotations

import time

import pytest
from asgiref.sync import sync_to_async

from tests.helpers import register_spus, run
from tests.live_sockets import drain, open_socket, run_in_fresh_loop, session_cookie

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def application(redis_url, settings):
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 0.2
    from channels.layers import channel_layers
    channel_layers.backends.clear()  # rebuild the layer on the test Redis
    from webapp.asgi import application
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "--partitions", "1", "--replication", "3")
    run("produce", "t", "--count", "1", "--acks", "all")  # the engine takes the topic on
    return application


def _views(messages: list[dict]) -> list[dict]:
    return [m["net"] for m in messages if "net" in m]


def _cell(net: dict, spu: int, end: str) -> str:
    row = next(r for r in net["rows"] if r["spu"] == spu)
    return row["cells"][net["ends"].index(end)]


def test_cuts_and_heals_reach_the_cluster_group_as_the_matrix_and_the_snapshot_agrees(
        application, viewer, viewer_client):
    def cut_expire_heal() -> None:
        run("net", "cut", "--spu", "1", "--one-way")
        time.sleep(0.3)
        run("net", "cut", "--spu", "2", "--from", "producers")  # steps: SPU 1's session expires
        run("produce", "t", "--value", "x", "--acks", "1")  # counted into the rehearsal
        time.sleep(0.2)  # a window apart: the cut state is its own message

    cookie = session_cookie(viewer)

    async def scenario():
        socket, _ = await open_socket(application, "/ws/cluster/", cookie)
        await sync_to_async(cut_expire_heal, thread_sensitive=False)()
        during = await drain(socket, quiet_s=0.4)
        await sync_to_async(run, thread_sensitive=False)("net", "heal", "--all")
        after = await drain(socket, quiet_s=0.4)
        await socket.disconnect()
        return during, after

    during, after = run_in_fresh_loop(scenario)
    cut = _views(during)[-1]
    assert _cell(cut, 1, "controller") == "out-cut" and _cell(cut, 2, "producers") == "cut"
    assert next(r for r in cut["rows"] if r["spu"] == 1)["expired"]
    assert [c["kind"] for c in cut["cuts"]] == ["controller", "producers"]
    assert cut["report"]["acknowledged_kept"]["acks_1"] == 1 and not cut["report"]["settled"]
    healed = _views(after)[-1]
    assert healed["cuts"] == [] and {_cell(healed, 1, "controller")} == {"ok"}
    snapshot = viewer_client.get("/api/live/snapshot/", {"group": "cluster"}).json()
    assert snapshot["net"]["cuts"] == [] and snapshot["net"]["rows"] == healed["rows"]
    assert snapshot["net"]["report"]["settled"] == healed["report"]["settled"]


def test_a_step_that_changes_no_link_sends_no_matrix(application, viewer):
    cookie = session_cookie(viewer)

    async def scenario():
        socket, _ = await open_socket(application, "/ws/cluster/", cookie)
        await sync_to_async(run, thread_sensitive=False)("produce", "t", "--value", "y")
        got = await drain(socket, quiet_s=0.3)
        await socket.disconnect()
        return got

    assert _views(run_in_fresh_loop(scenario)) == []
