"""Coalescing: a group hears at most one message per window, numbered one by one,
each with the latest state of what changed; a burst's last change is never lost."""
from __future__ import annotations

import math
import os
import subprocess
import sys
import time

import pytest
from asgiref.sync import sync_to_async

from tests.live_sockets import drain, open_socket, run_in_fresh_loop, session_cookie

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]
GROUP = "topic-orders.0"
PATH = "/ws/topics/orders/"


@pytest.fixture
def application(redis_url):
    from channels.layers import channel_layers
    channel_layers.backends.clear()  # rebuild the layer on the test Redis
    from webapp.asgi import application
    return application


def row(partition: int, hw: int) -> dict:
    return {"topic": "orders", "partition": partition, "leader": 1, "lrs": [1, 2],
            "hw": hw, "leo": hw, "resolution": "Online"}


def stage_burst(count: int, gap_s: float, partition: int = 0) -> None:
    from cluster.adapters.live_batches import stage
    for hw in range(count):
        stage(GROUP, {"partitions": [row(partition, hw)]})
        time.sleep(gap_s)


def listen(application, cookie: str, during) -> tuple[dict, list[dict]]:
    """Open a topic page's socket, run ``during`` in a thread, return the hello and messages."""
    async def scenario():
        socket, hello = await open_socket(application, PATH, cookie)
        await sync_to_async(during, thread_sensitive=False)()
        got = await drain(socket, quiet_s=0.6)
        await socket.disconnect()
        return hello, got

    return run_in_fresh_loop(scenario)


def test_a_burst_of_fifty_changes_arrives_as_one_message_per_window_ending_on_the_last(
        application, viewer):
    from cluster.adapters.live_batches import WINDOW_MS
    took: list[float] = []

    def burst() -> None:
        started = time.monotonic()
        stage_burst(50, 0)
        took.append(time.monotonic() - started)

    hello, got = listen(application, session_cookie(viewer), burst)
    # One message at once, then one per window the burst spanned, then the trailing one.
    # On a quiet machine the burst fits in one window (two messages); under load it may span more.
    windows = math.ceil(took[0] * 1000 / WINDOW_MS)
    assert 1 <= len(got) <= 1 + windows + 1, (len(got), took[0])
    assert len(got) < 50
    assert got[-1]["partitions"] == [row(0, 49)]


def test_one_second_of_changes_every_5_ms_gives_at_most_about_ten_messages(application, viewer):
    hello, got = listen(application, session_cookie(viewer), lambda: stage_burst(200, 0.005))
    spread_s = (got[-1]["at"] - got[0]["at"]) / 1000
    assert len(got) <= 2 + spread_s * 10, (len(got), spread_s)
    assert got[-1]["partitions"][-1]["hw"] == 199


def test_messages_are_numbered_one_by_one_from_the_sequence_in_the_hello(application, viewer):
    def three_apart() -> None:
        for hw in range(3):
            stage_burst(1, 0.25, partition=hw)

    hello, got = listen(application, session_cookie(viewer), three_apart)
    start = hello["groups"][GROUP]
    assert [(m["group"], m["seq"], m["v"]) for m in got] == [
        (GROUP, start + 1, 1), (GROUP, start + 2, 1), (GROUP, start + 3, 1)]


def test_a_message_carries_every_partition_changed_in_its_window_once(application, viewer):
    from cluster.adapters.live_batches import flush, stage

    stage("topic-quiet.0", {"partitions": [row(0, 1)]})  # takes and keeps the window
    stage("topic-quiet.0", {"partitions": [row(1, 5), row(0, 2)]})
    stage("topic-quiet.0", {"partitions": [row(0, 3)]})
    message = flush("topic-quiet.0")
    assert sorted((r["partition"], r["hw"]) for r in message["partitions"]) == [(0, 3), (1, 5)]


def test_two_processes_number_one_sequence_and_the_other_process_change_is_not_lost(
        application, viewer, redis_url):
    """A second process stages into a window this one holds; this one's trailing flush sends it."""
    script = ("import django, time; django.setup();"
              "from cluster.adapters.live_batches import stage;"
              f"stage({GROUP!r}, {{'partitions': [{row(7, 70)!r}]}});"
              "time.sleep(0.5)")
    env = {**os.environ, "REDIS_URL": redis_url, "DJANGO_SETTINGS_MODULE": "webapp.settings"}

    def both() -> None:
        stage_burst(1, 0)  # this process holds the window now
        subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=60)
        stage_burst(1, 0.3, partition=1)

    hello, got = listen(application, session_cookie(viewer), both)
    start = hello["groups"][GROUP]
    assert [m["seq"] for m in got] == list(range(start + 1, start + 1 + len(got)))
    seen = [(r["partition"], r["hw"]) for m in got for r in m["partitions"]]
    assert (7, 70) in seen and seen[-1] == (1, 0)



@pytest.mark.parametrize("leader, leo", [(1, 7), (None, None)])
def test_a_tick_stages_each_changed_partition_as_its_live_row(application, viewer,
                                                              leader, leo):
    from cluster.adapters.hot_state import Summary
    from cluster.adapters.live_batches import Changed, _stage_changed, live_row
    from cluster.core.replication.state import Resolution

    summary = Summary(leader, (1, 2) if leader else (), Resolution.ONLINE, 5, leo,
                      ((1, 7, 5), (2, 9, 5)))
    changes = [(("orders", i), summary) for i in (0, 199, 200)]
    hello, got = listen(application, session_cookie(viewer),
                        lambda: _stage_changed(Changed([k for k, _ in changes],
                                                       dict(changes)), set()))
    rows = sorted((r for m in got for r in m["partitions"]), key=lambda r: r["partition"])
    assert rows == [live_row(k, summary) for k, _ in changes[:2]]  # 200: the next block


def _sent_to_cluster(monkeypatch) -> list[dict]:
    """The cluster group's messages as this process sends them (decoded)."""
    import json

    from cluster.adapters import live_batches
    from cluster.live import CLUSTER_GROUP

    sent: list[dict] = []

    def record(group: str, message: dict) -> None:
        if group == CLUSTER_GROUP:
            sent.append(json.loads(message["text"]))

    monkeypatch.setattr(live_batches, "_send", record)
    return sent


def _wait_for(sent: list, count: int) -> None:
    deadline = time.monotonic() + 3
    while len(sent) < count and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_cluster_batch_asking_for_loads_is_followed_by_the_loads_its_stager_handed(
        redis_url, monkeypatch):
    from cluster.adapters.live_batches import stage
    from cluster.live import CLUSTER_GROUP

    sent = _sent_to_cluster(monkeypatch)
    stage(CLUSTER_GROUP, {"spus": [{"id": 3, "resolution": "Online", "rack": ""}]}, load=True,
          loads=lambda: {"totals": {"spus": 42}})
    _wait_for(sent, 2)
    rows, loads = sent[:2]
    assert [s["id"] for s in rows["spus"]] == [3]
    assert loads["totals"] == {"spus": 42} and loads["seq"] == rows["seq"] + 1


def test_a_batch_asking_for_loads_without_a_builder_sends_its_rows_and_says_so(
        redis_url, monkeypatch, caplog):
    from cluster.adapters.live_batches import stage
    from cluster.live import CLUSTER_GROUP

    sent = _sent_to_cluster(monkeypatch)
    stage(CLUSTER_GROUP, {"spus": [{"id": 4, "resolution": "Online", "rack": ""}]}, load=True)
    _wait_for(sent, 1)
    time.sleep(0.3)  # a second message, had one come, would be here by now
    assert [[s["id"] for s in m["spus"]] for m in sent] == [[4]]
    assert "gave nothing to build them" in caplog.text


def test_a_batch_carries_the_newest_events_only_oldest_first(redis_url):
    """A failover logs thousands of events at once: the group's message carries the newest
    LIVE_EVENTS of what was staged since its last one (a page keeps 50 at most), in order."""
    from cluster.adapters import hot_state
    from cluster.adapters.live_batches import LIVE_EVENTS, flush, live_key, stage_many

    group = "cluster"
    # Another process holds the window: staging only queues, the flush below sends.
    hot_state.client().set(live_key("window", group), "1", px=60_000)
    events = [{"operation": "status", "object_name": f"orders/{i}"} for i in range(300)]
    stage_many({group: {"events": events[:150]}})
    stage_many({group: {"events": events[150:]}})
    message = flush(group)
    assert message is not None and LIVE_EVENTS < 300
    assert message["events"] == events[-LIVE_EVENTS:]
    stage_many({group: {"events": events[:3]}})  # the next message: what came since
    assert flush(group)["events"] == events[:3]
