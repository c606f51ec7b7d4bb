"""Sign-in: repeated failures lock out (django-axes), reading needs a role, tokens revoke."""
from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.helpers import refused, run

pytestmark = [pytest.mark.django_db]

WRONG = {"username": "op", "password": "wrong-password"}
RIGHT = {"username": "op", "password": "op-pass-123"}


def test_the_login_page_locks_out_after_the_failure_limit_even_with_the_right_password(
        operator, settings):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert client.post("/login/", WRONG).status_code == 200
    assert client.post("/login/", WRONG).status_code == 429
    response = client.post("/login/", RIGHT)
    assert response.status_code == 429 and b"Too many failed sign-ins" in response.content
    assert "_auth_user_id" not in client.session


def test_the_token_endpoint_locks_out_with_a_json_error(operator, settings):
    client = APIClient()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert client.post("/api/token/", WRONG, format="json").status_code == 400
    assert client.post("/api/token/", WRONG, format="json").status_code == 429
    response = client.post("/api/token/", RIGHT, format="json")
    assert response.status_code == 429
    assert response.json()["error"].startswith("Too many failed sign-ins")
    assert not Token.objects.exists()


def test_a_success_before_the_limit_resets_the_count(operator, settings):
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        client.post("/login/", WRONG)
    assert client.post("/login/", RIGHT).status_code == 302
    client.post("/logout/")
    assert client.post("/login/", WRONG).status_code == 200
    assert client.post("/login/", RIGHT).status_code == 302


@pytest.fixture
def nobody(django_user_model):
    return django_user_model.objects.create_user("nobody", password="nobody-pass-123")


@pytest.mark.parametrize("url", ["/", "/topics/", "/partitions/", "/spus/", "/events/"])
def test_a_user_in_no_group_cannot_read_pages(client, nobody, url):
    client.force_login(nobody)
    response = client.get(url)
    assert response.status_code == 403 and b"has no role yet" in response.content


@pytest.mark.parametrize("url", ["/api/topics/", "/api/partitions/", "/api/cluster/",
                                 "/api/events/", "/api/spus/"])
def test_a_user_in_no_group_cannot_read_the_api(nobody, url):
    client = APIClient()
    client.force_authenticate(nobody)
    response = client.get(url)
    assert response.status_code == 403 and "no role" in response.json()["error"]


def test_viewers_still_read(viewer_client):
    assert viewer_client.get("/topics/").status_code == 200
    assert viewer_client.get("/api/topics/").status_code == 200


def test_a_token_outlives_the_browser_session_until_revoked_by_its_owner(operator):
    token = APIClient().post("/api/token/", RIGHT, format="json").json()["token"]
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/topics/").status_code == 200
    assert client.delete("/api/token/").status_code == 204
    response = client.get("/api/topics/")
    assert response.status_code in (401, 403) and response.json()["error"] == "Invalid token."


def test_an_operator_revokes_a_viewers_token_over_the_api(api, viewer):
    Token.objects.create(user=viewer)
    assert api.delete("/api/tokens/viewer/").status_code == 204
    assert not Token.objects.filter(user=viewer).exists()


def test_a_viewer_cannot_revoke_someone_elses_token(viewer, operator):
    Token.objects.create(user=operator)
    client = APIClient()
    client.force_authenticate(viewer)
    assert client.delete("/api/tokens/op/").status_code == 403
    assert Token.objects.filter(user=operator).exists()


def test_the_token_command_lists_and_revokes(operator, viewer):
    Token.objects.create(user=operator)
    Token.objects.create(user=viewer)
    assert "viewer" in run("token", "list")
    assert run("token", "revoke", "viewer").strip() == "1 token(s) revoked"
    assert run("token", "revoke", "--all").strip() == "1 token(s) revoked"
    assert not Token.objects.exists()


def test_the_token_command_refuses_an_unknown_user_and_no_target(db):
    assert "no user named ghost" in str(refused("token", "revoke", "ghost"))
    refused("token", "revoke")
