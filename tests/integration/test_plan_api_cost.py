"""Cost and risk of a plan through /api/plans/ and on the plan page (issue 34): the keys of
``plan rebalance --json`` (bytes_moved, per_spu, bottleneck_spu, eta_s, risk before/after)
under ``cost``, for count plans (in-process or computed by the worker) and byte plans."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from planner.models import Plan

pytestmark = pytest.mark.django_db
KAFKA = Path(__file__).resolve().parents[1] / "fixtures" / "kafka"
COST_KEYS = {"bytes_moved", "per_spu", "bottleneck_spu", "eta_s", "risk"}
ROW_KEYS = {"spu", "bytes_in", "bytes_out", "moves_in", "moves_out"}


def _cost_of(body: dict) -> dict:
    cost = body["cost"]
    assert COST_KEYS <= cost.keys()
    assert {"before", "after"} <= cost["risk"].keys()
    assert all(r.keys() == ROW_KEYS for r in cost["per_spu"])
    return cost


def test_a_count_plan_answers_its_cost_and_risk_when_created_and_read(
        api, planned_cluster, no_worker):
    answer = api.post("/api/plans/", {"add_spu": ["12:rack-a"], "throttle_bytes_per_s": 1000,
                                      "max_moves_per_spu": 2}, format="json")
    assert answer.status_code == 201, answer.json()
    cost = _cost_of(answer.json())
    assert sum(r["moves_in"] for r in cost["per_spu"]) > 0
    assert cost["eta_s"] is not None and cost["throttle_bytes_per_s"] == 1000
    detail = api.get(f"/api/plans/{answer.json()['id']}/").json()
    assert _cost_of(detail) == cost
    assert {r["rack"] for r in cost["risk"]["before"]["racks"]} == {
        "rack-a", "rack-b", "rack-c", "rack-d"}


def test_a_count_plan_computed_by_the_worker_carries_cost_too(
        api, planned_cluster, queued, django_capture_on_commit_callbacks):
    from planner.tasks import compute_plan

    with django_capture_on_commit_callbacks(execute=True):
        answer = api.post("/api/plans/", {"add_spu": ["12:rack-a"],
                                          "throttle_bytes_per_s": 500}, format="json")
    assert answer.status_code == 202 and answer.json()["cost"] is None
    assert compute_plan(answer.json()["id"]) == "pending"
    cost = _cost_of(api.get(f"/api/plans/{answer.json()['id']}/").json())
    assert cost["throttle_bytes_per_s"] == 500 and cost["per_spu"]


def test_a_byte_plan_through_the_api_matches_plan_rebalance_json(api, no_worker):
    call_command("cluster", "import", "--kafka-describe", str(KAFKA / "describe_new.txt"),
                 "--kafka-log-dirs", str(KAFKA / "log_dirs_new.txt"),
                 "--kafka-brokers", str(KAFKA / "brokers_new.txt"),
                 stdout=StringIO(), stderr=StringIO())
    answer = api.post("/api/plans/", {"balance": "bytes", "throttle_bytes_per_s": 2 ** 20},
                      format="json")
    assert answer.status_code == 201, answer.json()
    cost = _cost_of(answer.json())
    out = StringIO()
    call_command("plan", "rebalance", "--balance", "bytes", "--throttle-bytes-per-s",
                 str(2 ** 20), "--json", stdout=out, stderr=StringIO())
    cli = json.loads(out.getvalue())
    assert cost["bytes_moved"] == cli["bytes_moved"] > 0
    assert cost["per_spu"] == cli["per_spu"] and cost["risk"] == cli["risk"]
    assert cost["bottleneck_spu"] == cli["bottleneck_spu"] and cost["eta_s"] == cli["eta_s"]
    detail = api.get(f"/api/plans/{answer.json()['id']}/").json()
    assert detail["metrics"]["balance"] == "bytes"


@pytest.mark.parametrize("body, field", [
    ({"max_disk_percent": 50}, "max_disk_percent"),
    ({"leaders_only": True}, "leaders_only"),
    ({"balance": "bytes", "max_disk_percent": 0}, "max_disk_percent"),
    ({"balance": "bytes", "capacity": ["x:1"]}, "capacity"),
    ({"throttle_bytes_per_s": 0}, "throttle_bytes_per_s"),
    ({"balance": "weight"}, "balance"),
])
def test_bad_cost_or_byte_input_is_400_with_the_field_and_stores_nothing(
        api, planned_cluster, no_worker, body, field):
    answer = api.post("/api/plans/", {"add_spu": ["12:rack-a"], **body}, format="json")
    assert answer.status_code == 400
    assert field in json.dumps(answer.json())
    assert not Plan.objects.exists()


def test_bytes_without_imported_sizes_is_refused_with_400(api, planned_cluster, no_worker):
    answer = api.post("/api/plans/", {"balance": "bytes"}, format="json")
    assert answer.status_code == 400 and not Plan.objects.exists()


def test_a_count_plan_made_on_the_page_shows_its_cost_and_risk(
        operator_client, planned_cluster, no_worker):
    answer = operator_client.post("/planner/plans/new/", {
        "add_spu": "12:rack-a", "anti_affinity": "on", "leader_balance": "on",
        "order_optimisation": "on", "engine": "auto"})
    assert answer.status_code == 302
    record = Plan.objects.get()
    assert COST_KEYS <= record.metrics["cost"].keys()
    html = operator_client.get(f"/planner/plans/{record.pk}/").content.decode()
    assert 'id="cost"' in html and 'id="cost-per-spu"' in html
    assert html.count("<tr data-spu=") == len(record.metrics["cost"]["per_spu"]) > 0
