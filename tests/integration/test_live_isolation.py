"""Two installations on one Redis database: each hears only its own live messages and numbers
its own sequences; the namespace comes from the database unless LIVE_NAMESPACE names one."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async

from tests.live_sockets import drain, open_socket, run_in_fresh_loop, session_cookie

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[2]
GROUP = "topic-orders.0"
ROW = {"topic": "orders", "partition": 0, "leader": 1, "lrs": [1], "hw": 5, "leo": 5,
       "resolution": "Online"}
# The other installation: same Redis, its own namespace; stages a batch and an event's rows.
OTHER = ("import django; django.setup();"
         "from cluster.adapters.live_batches import current_seq, stage, _sender;"
         f"stage({GROUP!r}, {{'partitions': [{ROW!r}]}});"
         "stage('cluster', {'spus': [{'id': 3, 'resolution': 'Offline'}]});"
         "_sender().drain();"
         f"print(current_seq({GROUP!r}), current_seq('cluster'))")


@pytest.fixture
def application(redis_url):
    from channels.layers import channel_layers
    channel_layers.backends.clear()  # rebuild the layer on the test Redis
    from webapp.asgi import application
    return application


def other_installation(redis_url: str, namespace: str) -> list[int]:
    env = {**os.environ, "REDIS_URL": redis_url, "LIVE_NAMESPACE": namespace,
           "DJANGO_SETTINGS_MODULE": "webapp.settings"}
    done = subprocess.run([sys.executable, "-c", OTHER], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True, timeout=120)
    return [int(n) for n in done.stdout.split()]


def test_an_installation_does_not_hear_another_on_the_same_redis(application, viewer,
                                                                 redis_url, settings):
    from cluster.adapters.live_batches import current_seqs, stage

    assert settings.LIVE_NAMESPACE != "other-install"
    cookie = session_cookie(viewer)
    theirs: list[int] = []

    async def scenario():
        topic, hello = await open_socket(application, "/ws/topics/orders/", cookie)
        cluster, _ = await open_socket(application, "/ws/cluster/", cookie)
        theirs.extend(await sync_to_async(other_installation, thread_sensitive=False)(
            redis_url, "other-install"))
        heard = await drain(topic, beacons=True), await drain(cluster, beacons=True)
        await sync_to_async(stage, thread_sensitive=False)(GROUP, {"partitions": [ROW]})
        ours = await drain(topic, beacons=True)
        for socket in (topic, cluster):
            await socket.disconnect()
        return hello, heard, ours

    hello, heard, ours = run_in_fresh_loop(scenario)
    (on_topic, topic_beacons), (on_cluster, cluster_beacons) = (beacons_apart(m) for m in heard)
    ours, our_beacons = beacons_apart(ours)
    assert theirs == [1, 1], "the other installation numbers its own sequences"
    assert on_topic == [] and on_cluster == []
    assert current_seqs([GROUP, "cluster"]) == {GROUP: hello["groups"][GROUP] + 1, "cluster": 0}
    assert [(m["seq"], m["partitions"]) for m in ours] == [(hello["groups"][GROUP] + 1, [ROW])]
    # A beacon that fell in the window (a loaded machine is slow to start the other one)
    # numbers our groups, never theirs.
    assert all(b["groups"]["cluster"] == 0 for b in cluster_beacons)
    assert all(b["groups"][GROUP] == hello["groups"][GROUP] for b in topic_beacons)
    assert all(b["groups"][GROUP] in (hello["groups"][GROUP], hello["groups"][GROUP] + 1)
               for b in our_beacons)


def beacons_apart(messages: list[dict]) -> tuple[list[dict], list[dict]]:
    """The socket's updates, and its beacons (live.seqs every LIVE_BEACON_S)."""
    beacon = [m["type"] == "live.seqs" for m in messages]
    return ([m for m, b in zip(messages, beacon) if not b],
            [m for m, b in zip(messages, beacon) if b])


def settings_of(env: dict[str, str]) -> subprocess.CompletedProcess:
    script = ("from django.conf import settings;"
              "print(settings.LIVE_NAMESPACE, settings.CHANNEL_LAYERS['default']['CONFIG']['prefix'])")
    clean = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "LIVE_NAMESPACE")}
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, text=True,
                          capture_output=True, timeout=120,
                          env={**clean, "DJANGO_SETTINGS_MODULE": "webapp.settings", **env})


def test_the_namespace_follows_the_database_unless_named(tmp_path):
    one, two = (f"sqlite:///{tmp_path / name}" for name in ("one.sqlite3", "two.sqlite3"))
    first, again, other = (settings_of({"DATABASE_URL": url}).stdout.split()
                           for url in (one, one, two))
    assert first == again and first[0] != other[0]
    assert first[1] == f"asgi-{first[0]}" and other[1] == f"asgi-{other[0]}"
    named = settings_of({"DATABASE_URL": one, "LIVE_NAMESPACE": "blue-1"}).stdout.split()
    assert named == ["blue-1", "asgi-blue-1"]
    refused = settings_of({"LIVE_NAMESPACE": "a b"})
    assert refused.returncode != 0 and "LIVE_NAMESPACE='a b'" in refused.stderr
