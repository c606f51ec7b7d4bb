"""/healthz and /readyz for orchestrators: no login, each dependency named."""
from __future__ import annotations

import pytest

pytestmark = [pytest.mark.django_db]
UNREACHABLE = "redis://127.0.0.1:1/0"


def test_healthz_answers_anonymous_and_viewer_alike(client, viewer):
    assert client.get("/healthz").json() == {"status": "ok"}
    client.force_login(viewer)
    assert client.get("/healthz").json() == {"status": "ok"}


@pytest.mark.redis
def test_readyz_is_ready_with_database_redis_a_worker_heartbeat_and_a_ticking_engine(
        client, redis_url):
    from cluster.adapters import hot_state
    from cluster.services import tick_health

    hot_state.client().set(hot_state.WORKER, "test-worker", ex=5)
    tick_health.tick_committed()
    response = client.get("/readyz")
    assert response.status_code == 200
    body = response.json()
    assert body["ready"] is True and body["failing"] == []
    assert set(body["checks"]) == {"database", "redis", "worker", "engine"}
    assert all(c["ok"] for c in body["checks"].values())


@pytest.mark.redis
def test_readyz_answers_503_naming_the_worker_when_no_heartbeat_is_fresh(client, redis_url):
    from cluster.services import tick_health

    tick_health.tick_committed()
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["failing"] == ["worker"]
    from cluster.adapters import hot_state

    # The presence key lives in the store's namespace (issue 9): repl:{<store id>}:worker.
    assert hot_state.WORKER in response.json()["checks"]["worker"]["error"]


def test_readyz_answers_503_naming_redis_when_redis_is_unreachable(client, settings):
    settings.REDIS_URL = UNREACHABLE
    response = client.get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert "redis" in body["failing"] and "database" not in body["failing"]
    assert body["checks"]["redis"]["ok"] is False and body["checks"]["redis"]["error"]


def test_metrics_still_answers_store_figures_when_redis_is_unreachable(client, settings):
    settings.REDIS_URL = UNREACHABLE
    response = client.get("/metrics")
    assert response.status_code == 200
    assert b"controlroom_redis_up 0.0" in response.content
    assert b"controlroom_partitions_total" in response.content
