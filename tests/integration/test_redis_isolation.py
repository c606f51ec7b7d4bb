"""The suite writes only to the Redis it started: the default Redis of tests refuses.

Settings are read before any fixture, and with REDIS_URL unset they name the
machine's Redis (127.0.0.1:6379 db 0) or a `make run`'s; a test that forgot
``redis_url``, or a command it spawned, used to leave its keys there.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse

import pytest
import redis
from django.conf import settings

from webapp.celery import app

ROOT = Path(__file__).resolve().parents[2]


def _refuses(url: str) -> bool:
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.exceptions.ConnectionError:
        return True
    return False


def test_every_client_of_a_test_without_redis_url_points_at_a_port_that_refuses(
        no_redis_but_the_suites):
    url = no_redis_but_the_suites
    hosts = [h["address"] for h in settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"]]
    assert {settings.REDIS_URL, settings.CELERY_BROKER_URL, app.conf.broker_url,
            app.conf.result_backend, os.environ["REDIS_URL"], *hosts} == {url}
    assert urlparse(url).port != 6379 and _refuses(url)


def test_a_command_the_suite_spawns_inherits_the_refusing_redis(no_redis_but_the_suites):
    script = ("from django.conf import settings;"
              "print(settings.REDIS_URL, settings.CELERY_BROKER_URL)")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, text=True, timeout=120,
                          capture_output=True,
                          env={**os.environ, "DJANGO_SETTINGS_MODULE": "webapp.settings"})
    assert done.stdout.split() == [no_redis_but_the_suites] * 2


def test_a_write_without_redis_url_fails_loudly_instead_of_landing_elsewhere():
    from cluster.adapters.redis_keys import client

    with pytest.raises(redis.exceptions.ConnectionError):
        client().set("probe", "1")


def test_redis_url_points_every_client_at_the_suites_own_server(redis_url, redis_server):
    hosts = [h["address"] for h in settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"]]
    assert {settings.REDIS_URL, app.conf.broker_url, *hosts} == {redis_server}
    assert redis.Redis.from_url(redis_server).ping()
