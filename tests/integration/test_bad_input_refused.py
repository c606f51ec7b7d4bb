"""Bad input the adversary found (issue 36 item 7): refused with a reason, never a 500,
never stored. Each test fails on the code before the fix."""
from __future__ import annotations

import pytest
from axes.models import AccessAttempt

from cluster.models import Spu, Topic
from planner.models import Plan
from tests.helpers import refused, register_spus

pytestmark = pytest.mark.django_db
LONG_NAME = "u" * 300


@pytest.mark.parametrize("url", ["/login/", "/admin/login/"])
def test_a_username_past_the_longest_is_a_form_error_on_the_sign_in_pages(client, url):
    # django-axes keeps the username in a varchar(255): PostgreSQL raised on the insert.
    response = client.post(url, {"username": LONG_NAME, "password": "x"})
    assert response.status_code == 200 and b"at most 150 characters" in response.content
    assert not AccessAttempt.objects.exists()


def test_a_username_past_the_longest_is_a_400_on_the_token_endpoint(client):
    response = client.post("/api/token/", {"username": LONG_NAME, "password": "x"})
    assert response.status_code == 400 and "username" in response.json()["details"]
    assert not AccessAttempt.objects.exists()


def test_an_ordinary_wrong_password_is_still_counted(client, operator):
    response = client.post("/api/token/", {"username": "op", "password": "wrong"})
    assert response.status_code == 400 and AccessAttempt.objects.count() == 1


def test_a_generated_plan_name_is_bounded_by_the_column(api, planned_cluster, no_worker):
    adds = [f"{100 + i}:rack-{'abcd'[i % 4]}" for i in range(40)]
    response = api.post("/api/plans/", {"add_spu": adds}, format="json")
    assert response.status_code == 201
    name = Plan.objects.get().name
    assert len(name) <= 200 and name.startswith("add 100@rack-a, 101@rack-b")


def test_an_added_spu_id_past_the_largest_is_refused(api, planned_cluster):
    response = api.post("/api/plans/", {"add_spu": ["9999999999:x"]}, format="json")
    assert response.status_code == 400 and "2147483647" in response.json()["error"]
    assert not Plan.objects.exists()
    error = refused("plan", "rebalance", "--add-spu", "9999999999:rack-a")
    assert "2147483647" in str(error)


def test_a_trailing_newline_is_no_topic_name():
    register_spus(0)
    error = refused("topic", "create", "badnl\n", "-p", "1", "-r", "1")
    assert "may contain only lowercase letters" in str(error)
    assert not Topic.objects.exists()


def test_a_trailing_newline_is_no_rack():
    error = refused("spu", "register", "--id", "1", "--rack", "rack-a\n")
    assert "must be 1-63 letters" in str(error)
    assert not Spu.objects.exists()


@pytest.mark.parametrize("url, body", [
    ("/api/topics/", {"name": "t", "partition_count": 1, "replication": 1, "bogus": 1}),
    ("/api/spus/", {"id": 7, "bogus": 1, "other": 2}),
])
def test_unknown_keys_are_refused_naming_them(api, url, body):
    register_spus(0)
    response = api.post(url, body, format="json")
    assert response.status_code == 400
    assert "bogus" in response.json()["error"] and "bogus" in response.json()["details"]
    assert not Topic.objects.exists() and Spu.objects.count() == 1


@pytest.mark.redis
def test_a_negative_limit_is_not_called_an_offset(operator_client):
    error = operator_client.get("/api/metadata/?limit=-5").json()["error"]
    assert "limit must be a whole number from 1 to 5000" in error and "offset" not in error


@pytest.mark.redis
def test_a_huge_offset_is_said_to_be_too_large(operator_client):
    error = operator_client.get(f"/api/metadata/?from={'9' * 30}").json()["error"]
    assert "too large" in error


def test_the_sign_in_and_plan_name_refusals_hold_on_postgresql(tmp_path):
    """PostgreSQL enforces varchar lengths (SQLite does not): the tests above again, in a
    pytest of their own whose store is PostgreSQL."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    postgres = os.environ.get("TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    env = {**os.environ, "DATABASE_URL": f"{postgres.rsplit('/', 1)[0]}/bad_input_{os.getpid()}",
           "VAR_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "--nomigrations", __file__,
         "-k", "(username or plan_name) and not postgresql", "-W", "ignore::RuntimeWarning"],
        cwd=Path(__file__).resolve().parents[2], env=env, capture_output=True, text=True,
        timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "4 passed" in done.stdout


@pytest.mark.parametrize("method, url", [("post", "/api/spus/1/offline/"),
                                         ("delete", "/api/spus/1/")])
def test_a_body_sent_where_none_is_read_is_refused_naming_its_keys(api, method, url):
    register_spus(1)
    response = getattr(api, method)(url, {"force": True}, format="json")
    assert response.status_code == 400 and "force" in response.json()["error"]
    assert Spu.objects.get(pk=1).resolution != "Offline"
