"""Every shell binds the store its Redis keys name (cluster/adapters/redis_keys.py): a key
made outside any binding is refused (``UnboundStore``), so a request, a command or a task
run with nothing bound around it, in a fresh context as a server, ``manage.py`` or a
worker runs it, works only if its shell binds (issue 32: no store provider behind keys)."""
from __future__ import annotations

import contextvars
import json
from typing import Any

import pytest

from cluster.adapters import redis_keys
from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def unbound(call: Any, *args: Any, **kwargs: Any) -> Any:
    """``call`` in a fresh context: not even the test's own binding around it."""
    return contextvars.Context().run(call, *args, **kwargs)


@pytest.fixture
def cluster(redis_url):
    register_spus(0, 1, 2, rack="", online=True)
    unbound(run, "topic", "create", "t", "--partitions", "2", "--replication", "3")
    unbound(run, "produce", "t", "--count", "3", "--acks", "all")


def test_nothing_bound_is_refused_so_the_shells_below_bind_themselves(redis_url):
    with pytest.raises(redis_keys.UnboundStore):
        unbound(redis_keys.key, "meta")


def test_a_command_binds_its_store(cluster):
    listed = json.loads(unbound(run, "partition", "list", "--json"))
    assert {row["hw"] for row in listed} == {3} or sum(row["hw"] for row in listed) == 3


def test_a_scrape_and_a_page_bind_their_store(cluster, client, operator_client):
    scrape = unbound(client.get, "/metrics")
    assert scrape.status_code == 200
    assert b"controlroom_worker_up" in scrape.content or b"controlroom_" in scrape.content
    page = unbound(operator_client.get, "/")
    assert page.status_code == 200


def test_an_api_request_binds_its_store(cluster, api):
    response = unbound(api.get, "/api/topics/")
    assert response.status_code == 200


def test_a_task_binds_its_store(cluster):
    from cluster import tasks

    report = unbound(tasks.replication_tick)
    assert report is None or isinstance(report, dict)
