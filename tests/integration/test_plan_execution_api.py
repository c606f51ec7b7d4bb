"""POST /api/plans/<id>/apply|pause|resume|cancel/: operators only, status in the answer."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from cluster.models import Partition
from planner.models import PlanExecution
from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture
def plan_id(redis_url) -> int:
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "--partitions", "6", "--replication", "2")
    register_spus(3, online=True)
    out = StringIO()
    call_command("plan", "rebalance", "--json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())["id"]


@pytest.fixture
def viewer_api(viewer) -> APIClient:
    client = APIClient()
    client.force_authenticate(viewer)
    return client


def test_an_operator_applies_pauses_resumes_and_cancels(plan_id, api):
    applied = api.post(f"/api/plans/{plan_id}/apply/", {"max_moves": 1}, format="json")
    assert applied.status_code == 200
    assert applied.json()["state"] == "running" and applied.json()["max_moves"] == 1
    assert api.post(f"/api/plans/{plan_id}/pause/").json()["state"] == "paused"
    assert api.post(f"/api/plans/{plan_id}/resume/").json()["state"] == "running"
    assert api.post(f"/api/plans/{plan_id}/cancel/").json()["state"] == "cancelled"


def test_a_request_the_state_does_not_allow_is_a_409(plan_id, api):
    response = api.post(f"/api/plans/{plan_id}/resume/")
    assert response.status_code == 409
    assert response.json()["details"] == {"state": "pending"}


def test_bad_throttle_values_are_a_400_and_nothing_starts(plan_id, api):
    response = api.post(f"/api/plans/{plan_id}/apply/", {"max_moves_per_spu": 0}, format="json")
    assert response.status_code == 400 and set(response.json()) >= {"error", "details"}
    assert not PlanExecution.objects.exists()


def test_an_unknown_plan_is_a_404(redis_url, api):
    assert api.post("/api/plans/999/apply/", {}, format="json").status_code == 404


@pytest.mark.parametrize("action", ["apply", "pause", "resume", "cancel"])
def test_viewers_are_refused_and_nothing_changes(plan_id, api, viewer_api, action):
    if action != "apply":
        api.post(f"/api/plans/{plan_id}/apply/", {}, format="json")
    before = (list(PlanExecution.objects.values_list("state", flat=True)),
              list(Partition.objects.order_by("pk").values_list("replicas", flat=True)))
    response = viewer_api.post(f"/api/plans/{plan_id}/{action}/", {}, format="json")
    assert response.status_code == 403 and set(response.json()) == {"error", "details"}
    assert before == (list(PlanExecution.objects.values_list("state", flat=True)),
                      list(Partition.objects.order_by("pk").values_list("replicas", flat=True)))
