"""With a real Celery worker, a requested plan is computed by the worker, not the request."""
from __future__ import annotations

import time

import pytest

pytestmark = pytest.mark.redis


@pytest.mark.django_db(transaction=True)
def test_a_celery_worker_computes_a_queued_plan_and_stores_its_moves(redis_url, api,
                                                                     planned_cluster,
                                                                     monkeypatch):
    from celery.contrib.testing.worker import start_worker

    from planner.models import Plan
    from webapp.celery import app

    # The in-thread test worker does not announce itself; the presence key is the cluster's.
    monkeypatch.setattr("planner.services.worker_running", lambda: True)
    with start_worker(app, pool="solo", perform_ping_check=False, shutdown_timeout=10):
        answer = api.post("/api/plans/", {"add_spu": ["12:rack-a"]}, format="json")
        assert answer.status_code == 202 and answer.json()["state"] == "computing"
        deadline = time.monotonic() + 30
        while Plan.objects.get().state == "computing" and time.monotonic() < deadline:
            time.sleep(0.1)
    plan = Plan.objects.get()
    assert plan.state == "pending" and plan.moves and plan.task_id
    assert plan.progress["stage"] == "storing"
