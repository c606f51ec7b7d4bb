"""Self-healing's controls and one detection run at a time, with time passed in (no worker).

The command, the API and the page switch it and set its thresholds (viewers
refused), ``healing check`` follows an SPU down through detected, alerting and
planned in notify-only mode without changing the cluster, every automatic
action is a metadata-log entry with the actor ``self-healing``, and /metrics
counts the anomalies. An operator's ``plan apply`` pre-empts a self-healing plan
being carried out, which is planned afresh once the operator's ended; runs that
overlap leave one open anomaly per condition.
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


def tick() -> None:
    from cluster.services import replication
    from cluster.services.waiting import LocalQueue

    replication.replication_tick(dispatch=LocalQueue())


def spu_down_cluster() -> None:
    for rack, ids in (("a", (0, 1)), ("b", (2, 3)), ("c", (4, 5))):
        register_spus(*ids, rack=rack, online=True)
    run("topic", "create", "t", "--partitions", "6", "--replication", "3", "--min-lrs", "2")
    run("healing", "set", "spu_down_alert_after_s", "2")
    run("healing", "set", "spu_down_heal_after_s", "5")


def test_an_operators_apply_preempts_self_healing_which_plans_afresh_once_it_ended(redis_url):
    from planner.core.execution import layout_of
    from planner.drain import plan_drain
    from planner.execution import plan_wait

    spu_down_cluster()
    for partition in range(6):  # records to copy: a move takes a few ticks
        run("produce", "t", "--partition", str(partition), "--count", "50", "--acks", "all")
    run("healing", "enable")
    t0 = int(time.time() * 1000)
    spu_offline(spu_id=4)
    # The operator's: SPU 5 drained (no replica of SPU 4 in its partitions), planned now.
    operators = plan_drain(spu_id=5, by="operator")
    other = plan_drain(spu_id=0, by="operator")  # keeps replicas on SPU 4: cannot start
    for step in (0, 2_000, 5_000):
        healing_check(now_ms=t0 + step)
    [applying] = status()["anomalies"]
    first = PlanExecution.objects.get(plan_id=applying["plan_id"])
    assert applying["state"] == "applying" and first.plan.created_by == "self-healing"
    tick()  # its moves start
    first.refresh_from_db()
    assert first.in_flight and first.moves_done == 0
    assert "cannot take them" in refused("plan", "apply", str(other.pk)).args[0]
    first.refresh_from_db()
    assert first.state == "running", "an operator's plan that cannot start cancels nothing"

    # `plan apply` (the page and the API call the same service): self-healing's plan is
    # cancelled through the planner's cancel, its moves in flight roll back, the operator's
    # plan starts from the layout it was made from.
    run("plan", "apply", str(operators.pk))
    first.refresh_from_db()
    assert first.state == "cancelled" and first.finished_at is not None and not first.in_flight
    assert first.moves_failed == len(first.started), "rolled back, none landed"
    assert "pre-empted by plan" in first.reason
    assert PlanExecution.objects.get(plan=operators).state == "running"
    assert "one plan at a time" in refused("plan", "apply", str(other.pk)).args[0], \
        "operators' plans still refuse each other"

    healing_check(now_ms=t0 + 6_000)
    [waiting] = status()["anomalies"]
    assert waiting["state"] == "preempted" and waiting["preempted_by"] == operators.pk
    assert f"an operator's plan ({operators.pk}) pre-empted" in status()["waiting"]
    assert Plan.objects.filter(created_by="self-healing").count() == 1
    event = Event.objects.get(actor="self-healing", operation="preempted")
    assert event.params["preempted_by"] == operators.pk and event.log_offset is not None

    assert plan_wait(plan_id=operators.pk, timeout_s=20)
    healing_check(now_ms=t0 + 7_000)
    [again] = status()["anomalies"]
    assert again["state"] == "applying" and again["plan_id"] != first.plan_id
    assert Anomaly.objects.get().plans == 2, "the same anomaly, planned afresh"
    fresh = Plan.objects.get(pk=again["plan_id"])
    layout = [r for _, r in sorted(Partition.objects.values_list("index", "replicas"))]
    assert layout_of(fresh.current) == {"t": layout}, "planned from the cluster as it then is"
    assert all(5 not in r for r in layout), "the operator's drain of SPU 5 was carried out"
    assert fresh.moves and all(m["removed"] == [4] for m in fresh.moves)


def test_overlapping_detection_runs_leave_one_open_anomaly_per_condition(redis_url, monkeypatch):
    from healing import services

    spu_down_cluster()
    spu_offline(spu_id=4)
    t0, inner = int(time.time() * 1000), []
    hold_of = services.hold_of

    def another_run_meanwhile(row, now):  # after this run read the open anomalies
        if not inner:
            inner.append({})
            inner[0] = healing_check(now_ms=now)
        return hold_of(row, now)

    monkeypatch.setattr(services, "hold_of", another_run_meanwhile)
    healing_check(now_ms=t0)
    assert inner[0]["skipped"] and "another detection run" in inner[0]["waiting"]
    assert Anomaly.objects.count() == 1

    # A run whose claim lapsed (a stuck worker): the database's constraint still decides.
    inner.clear()
    Anomaly.objects.all().delete()
    monkeypatch.setattr(services, "_claim_run", lambda: "every run wins")
    healing_check(now_ms=t0)
    assert not inner[0].get("skipped")
    assert list(Anomaly.objects.values_list("type", "subject", "state")) == \
        [("spu_down", "spu-4", "detected")]


def test_a_preemption_landing_while_a_run_plans_stops_that_run_applying(redis_url, monkeypatch):
    from healing import services
    from healing.preemption import Hold

    spu_down_cluster()
    run("healing", "enable")
    t0 = int(time.time() * 1000)
    spu_offline(spu_id=4)
    operators = Plan.objects.create(created_by="operator", name="operator's", scenario={},
                                    options={}, metrics={})
    # The operator's apply told self-healing after this run read the hold (a stale view).
    HealingConfig.objects.filter(pk=1).update(held_for=operators.pk, preempted_plan=None,
                                              held_until="2999-01-01T00:00:00Z")
    monkeypatch.setattr(services, "hold_of", lambda row, now: Hold())
    for step in (0, 2_000, 5_000):
        result = healing_check(now_ms=t0 + step)
    assert result["planned"] is None and "pre-empted" in result["waiting"]
    assert not Plan.objects.filter(created_by="self-healing").exists()
