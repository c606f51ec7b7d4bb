"""``user add|role|list``: letting someone in is a command, not a Django shell session."""
from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from cluster.models import Event
from cluster.roles import can_read, is_operator
from tests.helpers import refused, run

pytestmark = pytest.mark.django_db


def test_user_add_makes_a_viewer_who_signs_in_with_the_printed_password_and_reads():
    data = json.loads(run("user", "add", "alice", "--json"))
    assert (data["user"], data["role"]) == ("alice", "viewer") and len(data["password"]) >= 16
    alice = get_user_model().objects.get(username="alice")
    assert can_read(alice) and not is_operator(alice)
    browser = Client()
    signed_in = browser.post("/login/", {"username": "alice", "password": data["password"]})
    assert signed_in.status_code == 302
    assert browser.get("/topics/").status_code == 200
    assert browser.post("/api/spus/", {"id": 1}).status_code == 403
    assert Event.objects.filter(object_type="user", object_name="alice", operation="create",
                                actor="cli").exists()


def test_the_text_output_says_the_password_once_and_how_to_change_it():
    out = run("user", "add", "bob")
    assert out.startswith("viewer bob added; password: ") and "changepassword bob" in out


def test_user_role_turns_a_viewer_into_an_operator_and_back_to_no_role():
    run("user", "add", "carol")
    run("user", "role", "carol", "operator")
    assert is_operator(get_user_model().objects.get(username="carol"))
    assert json.loads(run("user", "list", "--json")) == [{"user": "carol", "role": "operator"}]
    run("user", "role", "carol", "none")
    assert not can_read(get_user_model().objects.get(username="carol"))


def test_an_existing_name_is_refused_and_keeps_its_password():
    run("user", "add", "dave")
    before = get_user_model().objects.get(username="dave").password
    assert "user dave exists" in str(refused("user", "add", "dave", code=2))
    assert get_user_model().objects.get(username="dave").password == before


@pytest.mark.parametrize("name", ["a b", "x" * 151, ""])
def test_a_name_django_cannot_hold_is_bad_input(name):
    refused("user", "add", name)
    assert not get_user_model().objects.exists()


def test_an_unknown_user_gets_no_role():
    assert "no user named nobody" in str(refused("user", "role", "nobody", "viewer"))
