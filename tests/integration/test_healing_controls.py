"""Self-healing's controls and one detection run at a time, with time passed in (no worker).

The command, the API and the page switch it and set its thresholds (viewers
refused), ``healing check`` follows an SPU down through detected, alerting and
planned in notify-only mode without changing the cluster, every automatic
action is a metadata-log entry with the actor ``self-healing``, and /metrics
counts the anomalies.
"""
from __future__ import annotations

import json
import time

import pytest
from django.core.management import call_command

from cluster.models import Event, Partition
from cluster.services.outages import spu_offline, spu_online
from healing.models import Anomaly, HealingConfig
from healing.services import healing_check
from planner.models import Plan, PlanExecution
from tests.helpers import refused, register_spus, run
from tests.integration.test_metrics_endpoint import sample, scrape

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def status() -> dict:
    return json.loads(run("healing", "status", "--json"))


def test_the_command_switches_modes_and_sets_thresholds_by_name(db):
    assert status()["mode"] == "off"
    assert json.loads(run("healing", "enable", "--notify-only", "--json"))["mode"] == "notify-only"
    assert status()["mode"] == "notify-only"
    run("healing", "set", "spu_down_alert_after_s", "2")
    run("healing", "set", "spu_down_heal_after_s", "5")
    assert status()["settings"]["spu_down_heal_after_s"] == 5.0
    assert json.loads(run("healing", "enable", "--json"))["mode"] == "heal"
    assert "self-healing: off" in run("healing", "disable")


def test_a_bad_name_or_value_exits_2_with_the_reason_and_stores_nothing(db):
    assert "unknown setting" in refused("healing", "set", "heal_after", "5").args[0]
    assert "must be a number" in refused("healing", "set", "spu_down_heal_after_s", "x").args[0]
    assert "must not be below" in refused("healing", "set", "spu_down_heal_after_s", "1").args[0]
    assert HealingConfig.objects.filter(values__has_key="spu_down_heal_after_s").count() == 0


def test_the_api_lets_viewers_read_and_only_operators_change(api, viewer):
    from rest_framework.test import APIClient

    reader = APIClient()
    reader.force_authenticate(viewer)
    assert reader.get("/api/healing/").json()["mode"] == "off"
    assert reader.post("/api/healing/", {"mode": "heal"}, format="json").status_code == 403
    assert reader.post("/api/healing/settings/", {"name": "fix_after_s", "value": "1"},
                       format="json").status_code == 403
    assert api.post("/api/healing/", {"mode": "notify-only"}, format="json").json()["mode"] == \
        "notify-only"
    bad = api.post("/api/healing/settings/", {"name": "moves_per_hour", "value": "0"},
                   format="json")
    assert bad.status_code == 400 and "must be 1 to" in bad.json()["error"]
    good = api.post("/api/healing/settings/", {"name": "moves_per_hour", "value": "60"},
                    format="json")
    assert good.json()["moves_per_hour"] == 60
    assert reader.get("/api/healing/settings/").json()["moves_per_hour"] == 60
    assert reader.get("/api/healing/anomalies/?state=closed").status_code == 200
    assert reader.get("/api/healing/anomalies/?state=x").status_code == 400


def test_the_page_shows_viewers_the_state_and_refuses_their_changes(viewer_client):
    page = viewer_client.get("/healing/")
    assert page.status_code == 200 and b"Open anomalies" in page.content
    assert b"setting-form" not in page.content
    assert viewer_client.post("/healing/mode/", {"mode": "heal"}).status_code == 403
    assert viewer_client.post("/healing/settings/", {"name": "fix_after_s",
                                                     "value": "1"}).status_code == 403
    assert HealingConfig.objects.filter(mode="heal").count() == 0


def test_an_operator_sees_a_bad_value_next_to_the_field(operator_client):
    page = operator_client.post("/healing/settings/", {"name": "fix_after_s", "value": "-3"})
    assert page.status_code == 400 and b"id_value-error" in page.content
    assert operator_client.post("/healing/mode/", {"mode": "notify-only"}).status_code == 302
    assert HealingConfig.objects.get().mode == "notify-only"


def test_notify_only_plans_an_spu_down_past_its_thresholds_and_changes_nothing(
        redis_url, client, operator):
    for rack, ids in (("a", (0, 1)), ("b", (2, 3)), ("c", (4, 5))):
        register_spus(*ids, rack=rack, online=True)
    run("topic", "create", "t", "--partitions", "6", "--replication", "3", "--min-lrs", "2")
    run("healing", "enable", "--notify-only")
    run("healing", "set", "spu_down_alert_after_s", "2")
    run("healing", "set", "spu_down_heal_after_s", "5")
    layout = dict(Partition.objects.values_list("index", "replicas"))
    t0 = int(time.time() * 1000)

    spu_offline(spu_id=4)
    healing_check(now_ms=t0)
    assert [(a["type"], a["state"]) for a in status()["anomalies"]] == [("spu_down", "detected")]
    healing_check(now_ms=t0 + 2_000)
    assert status()["anomalies"][0]["state"] == "alerting"
    healing_check(now_ms=t0 + 5_000)
    [anomaly] = status()["anomalies"]
    assert anomaly["state"] == "planned" and anomaly["plan"] == anomaly["plan_id"] is not None
    plan = Plan.objects.get(pk=anomaly["plan"])
    assert plan.created_by == "self-healing" and len(plan.moves) == 3
    assert all(m["removed"] == [4] for m in plan.moves)
    assert not PlanExecution.objects.exists()
    assert dict(Partition.objects.values_list("index", "replicas")) == layout

    client.force_login(operator)
    samples = scrape(client)
    assert sample(samples, "controlroom_anomalies", type="spu_down", state="planned") == 1
    assert sample(samples, "controlroom_self_healing_moves_total") == 0
    page = client.get("/healing/")
    assert f'href="/planner/plans/{plan.pk}/"'.encode() in page.content
    assert client.get(f"/planner/plans/{plan.pk}/").status_code == 200

    spu_online(spu_id=4)
    healing_check(now_ms=t0 + 6_000)
    assert status()["anomalies"] == []
    assert Anomaly.objects.get().state == "cancelled"
    automatic = Event.objects.filter(actor="self-healing")
    assert {e.operation for e in automatic} >= {"detected", "alerting", "planned", "create",
                                                "cancelled"}
    assert all(e.log_offset is not None for e in automatic), "entries of the metadata log"


def test_the_healing_endpoints_answer_what_the_schema_documents(api, viewer):
    from rest_framework.test import APIClient

    from tests.integration.test_api_schema import check

    schema = api.get("/api/schema/?format=json").json()
    reader = APIClient()
    reader.force_authenticate(viewer)
    Anomaly.objects.create(type="slow_spu", subject="spu-2", state="alerting", detail="slow",
                           spus=[2], detected_at="2026-01-01T00:00:00Z")
    calls = [(api, "get", "/api/healing/", None),
             (api, "post", "/api/healing/", {"mode": "heal"}),
             (api, "post", "/api/healing/", {"mode": "sometimes"}),
             (reader, "post", "/api/healing/", {"mode": "off"}),
             (api, "get", "/api/healing/anomalies/", None),
             (api, "get", "/api/healing/anomalies/?state=closed", None),
             (api, "get", "/api/healing/settings/", None),
             (api, "post", "/api/healing/settings/", {"name": "fix_after_s", "value": "2"}),
             (api, "post", "/api/healing/settings/", {"name": "fix_after_s", "value": "x"})]
    for client, method, path, body in calls:
        response = getattr(client, method)(path, body, format="json")
        check(schema, response, method, path)
    assert api.get("/api/healing/").json()["anomalies"][0]["type"] == "slow_spu"
