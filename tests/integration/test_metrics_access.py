"""Who may scrape /metrics: the bearer token, or loopback when no token is set."""
from __future__ import annotations

import pytest

pytestmark = [pytest.mark.django_db, pytest.mark.redis]

OUTSIDE = {"REMOTE_ADDR": "10.1.2.3"}


@pytest.fixture(autouse=True)
def _redis(redis_url):
    return redis_url


def test_without_a_token_loopback_scrapes_without_logging_in(client, settings):
    settings.METRICS_TOKEN = ""
    for address in ("127.0.0.1", "::1"):
        response = client.get("/metrics", REMOTE_ADDR=address)
        assert response.status_code == 200
        assert b"controlroom_partitions_total" in response.content


def test_without_a_token_another_address_is_refused_with_a_json_reason(client, settings):
    settings.METRICS_TOKEN = ""
    response = client.get("/metrics", **OUTSIDE)
    assert response.status_code == 403
    assert response.json()["error"] == "without METRICS_TOKEN only loopback may scrape"
    assert response.json()["details"] == {"remote_addr": "10.1.2.3"}


def test_a_viewer_session_does_not_replace_the_loopback_rule(viewer_client, settings):
    settings.METRICS_TOKEN = ""
    assert viewer_client.get("/metrics", **OUTSIDE).status_code == 403


def test_with_a_token_the_bearer_scrapes_from_anywhere(client, settings):
    settings.METRICS_TOKEN = "s3cret-token"
    response = client.get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token", **OUTSIDE)
    assert response.status_code == 200


@pytest.mark.parametrize("header", [None, "Bearer wrong", "s3cret-token", "Basic s3cret-token"])
def test_with_a_token_loopback_and_wrong_tokens_are_refused(client, settings, header):
    settings.METRICS_TOKEN = "s3cret-token"
    extra = {"HTTP_AUTHORIZATION": header} if header else {}
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1", **extra)
    assert response.status_code == 401
    assert set(response.json()) == {"error", "details"}
    assert response["WWW-Authenticate"] == "Bearer"


def test_with_a_token_a_logged_in_viewer_still_needs_it(viewer_client, settings):
    settings.METRICS_TOKEN = "s3cret-token"
    assert viewer_client.get("/metrics").status_code == 401


def test_metrics_answers_only_get(client):
    assert client.post("/metrics").status_code == 405
