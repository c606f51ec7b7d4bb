"""A Redis that stops answering (SIGSTOP: the TCP connection stays up, nothing replies)
makes commands exit 1 and the API answer 503 within seconds instead of hanging, and
the hot-state lease lets go of it. Hanging is caught by pytest-timeout."""
from __future__ import annotations

import os
import signal
import threading
import time
from io import StringIO

import kombu.exceptions
import pytest
from celery import Celery
from django.core.management import CommandError, call_command

from cluster.adapters import lease
from cluster.ports import bound_to_store
from tests.helpers import register_spus, run
from webapp.redis_server import start_private_redis

pytestmark = [pytest.mark.django_db, pytest.mark.redis, pytest.mark.timeout(120)]

# The timeout the tests give the clients; a hang would last until pytest-timeout.
SOCKET_TIMEOUT_S = 1.0
# Failing takes one timeout, perhaps a reconnect and a retry; generous for a loaded machine.
GIVES_UP_WITHIN_S = 15 * SOCKET_TIMEOUT_S


@pytest.fixture
def stoppable_redis(tmp_path, settings):
    """A private redis-server holding a replicated topic ``orders``; ``stop()`` SIGSTOPs it."""
    proc, url = start_private_redis(tmp_path / "redis")
    settings.REDIS_URL = url
    settings.LIVE_UPDATES = False
    settings.REDIS_SOCKET_TIMEOUT_S = settings.REDIS_CONNECT_TIMEOUT_S = SOCKET_TIMEOUT_S
    register_spus(0, 1, online=True)
    run("topic", "create", "orders", "-p", "1", "-r", "2")
    run("produce", "orders", "--count", "3")
    stopped = []

    def stop() -> None:
        os.kill(proc.pid, signal.SIGSTOP)
        stopped.append(True)

    yield stop
    if stopped:
        os.kill(proc.pid, signal.SIGCONT)
    proc.terminate()
    proc.wait(10)


def timed(call) -> tuple[object, float]:
    start = time.monotonic()
    try:
        return call(), time.monotonic() - start
    except Exception as exc:  # the outcome under test is the exception
        return exc, time.monotonic() - start


@pytest.mark.parametrize("args", [["partition", "list"], ["consume", "orders"],
                                  ["produce", "orders", "--count", "1"]])
def test_a_command_exits_1_with_one_line_when_redis_stops_answering(stoppable_redis, args):
    stoppable_redis()
    error, took = timed(lambda: call_command(*args, stdout=StringIO(), stderr=StringIO()))
    assert isinstance(error, CommandError) and error.returncode == 1
    assert "cannot reach Redis" in str(error) and "\n" not in str(error)
    assert took < GIVES_UP_WITHIN_S


def test_a_command_whose_redis_stops_midway_exits_1_with_one_line(stoppable_redis,
                                                                  monkeypatch):
    # Past the up-front PING: Redis stops answering while the command works.
    monkeypatch.setattr("cluster.management.commands._cli.reachable_redis_or_reason",
                        lambda: None)
    stoppable_redis()
    error, took = timed(lambda: call_command("consume", "orders", stdout=StringIO()))
    assert isinstance(error, CommandError) and error.returncode == 1
    assert "cannot reach Redis" in str(error) and "\n" not in str(error)
    assert took < GIVES_UP_WITHIN_S


def test_the_api_answers_503_json_when_redis_stops_answering(stoppable_redis, api):
    stoppable_redis()
    response, took = timed(lambda: api.get("/api/topics/orders/records/"))
    assert response.status_code == 503
    assert "cannot reach Redis" in response.json()["error"]
    assert response.json()["details"] == {"retry": True}
    assert took < GIVES_UP_WITHIN_S


def test_the_lease_and_its_renewal_let_go_of_a_stopped_redis(stoppable_redis, settings):
    settings.REPLICATION_LOCK_LEASE_S = 0.3  # renewals every 0.1 s: one is soon in flight
    with bound_to_store():
        held = lease.held(5.0)
        held.__enter__()
        stoppable_redis()
        time.sleep(0.5)
        _, took = timed(lambda: held.__exit__(None, None, None))
    renewals = [t for t in threading.enumerate() if t.name == "hot-state-lease"]
    for thread in renewals:
        thread.join(GIVES_UP_WITHIN_S)
    assert took < GIVES_UP_WITHIN_S
    assert not any(t.is_alive() for t in renewals)


def test_publishing_a_task_to_a_stopped_redis_fails_instead_of_hanging(stoppable_redis,
                                                                        settings, redis_server):
    # An app configured as webapp/celery.py configures the web's and the worker's, with the
    # settings' own timeouts (kombu's default waits forever); Celery retries a publish 3 times.
    app = Celery("publish-check", set_as_current=False)
    app.config_from_object("django.conf:settings", namespace="CELERY")
    # The broker is the one that stops; the result backend is the suite's own live Redis
    # (left to the settings, it was whatever Redis the machine had on 6379).
    app.conf.broker_url = settings.REDIS_URL
    app.conf.result_backend = redis_server
    stoppable_redis()
    try:
        error, took = timed(lambda: app.send_task("cluster.tasks.replication_tick", expires=1))
    finally:
        app.close()
    assert isinstance(error, kombu.exceptions.OperationalError)
    assert took < 6 * (settings.REDIS_SOCKET_TIMEOUT_S + 2 * SOCKET_TIMEOUT_S)
