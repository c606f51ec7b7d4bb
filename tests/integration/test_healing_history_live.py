"""Issue 35.7: a closed anomaly moves to the self-healing page's History live. The event
that closes it, as the cluster group hears it, carries the History row's columns
(static/js/healing.js moves the row with them; tests/browser/test_browser_live_offers.py)."""
from __future__ import annotations

import time

import pytest

from cluster.services.outages import spu_offline, spu_online
from healing.models import Anomaly
from healing.services import healing_check, healing_enable, healing_set
from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture
def heard(monkeypatch) -> list[tuple[str, dict]]:
    """What the committed events staged for the live groups, in order."""
    from cluster.projections import announce

    staged: list[tuple[str, dict]] = []
    monkeypatch.setattr(announce, "stage_many", lambda batches, **_: staged.extend(batches.items()))
    return staged


def _anomaly_events(staged: list[tuple[str, dict]]) -> list[dict]:
    return [e for group, data in staged if group == "cluster"
            for e in data.get("events", []) if e["object_type"] == "anomaly"]


def test_the_event_closing_an_anomaly_carries_its_history_row(
        redis_url, heard, django_capture_on_commit_callbacks):
    for rack, ids in (("a", (0, 1)), ("b", (2, 3)), ("c", (4, 5))):
        register_spus(*ids, rack=rack, online=True)
    run("topic", "create", "t", "--partitions", "6", "--replication", "3", "--min-lrs", "2")
    healing_enable(notify_only=True)
    healing_set(name="spu_down_alert_after_s", value="2")
    healing_set(name="spu_down_heal_after_s", value="5")
    t0 = int(time.time() * 1000)
    spu_offline(spu_id=4)
    for at in (t0, t0 + 5_000):
        healing_check(now_ms=at)
    spu_online(spu_id=4)
    with django_capture_on_commit_callbacks(execute=True):
        healing_check(now_ms=t0 + 6_000)

    closed = Anomaly.objects.get()
    [event] = [e for e in _anomaly_events(heard) if e["operation"] == "cancelled"]
    assert event["object_name"] == str(closed.pk)
    params = event["params"]
    assert params["finished_at"] == closed.finished_at.isoformat()
    assert params["planned_at"] == closed.planned_at.isoformat()
    assert params["plan"] == closed.plan_id is not None
    assert params["moves"] == closed.plan.metrics["partitions_moved"] == 3
    assert {"type", "subject", "detected_at"} <= set(params)
    # Never applied: nothing of an execution travels (the page leaves those cells empty).
    assert not {"moves_done", "bytes_moved", "duration_s"} & set(params)


def test_the_page_renders_history_rows_by_anomaly_for_the_live_script(viewer_client):
    from django.utils import timezone

    a = Anomaly.objects.create(type="spu_down", subject="spu-4", state="healed",
                               detected_at=timezone.now(), finished_at=timezone.now())
    page = viewer_client.get("/healing/").content.decode()
    assert f'<tbody data-keep="50"><tr data-anomaly="{a.pk}">' in page
