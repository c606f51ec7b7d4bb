"""Issue 18's defects 5 and 6 for plans: one plan at a time, decided by the database;
and the executor's progress written only after the tick's fenced save landed."""
from __future__ import annotations

import json
import threading
import time
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from cluster.adapters import hot_state
from cluster.adapters.lease import LeaseLost
from cluster.services.waiting import LocalQueue
from cluster.services.replication import replication_tick
from planner import execution
from planner.models import Plan, PlanExecution
from tests.helpers import register_spus, run

pytestmark = [pytest.mark.redis]


def rebalance() -> dict:
    out = StringIO()
    call_command("plan", "rebalance", "--json", stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


@pytest.fixture
def two_plans(redis_url) -> list[int]:
    """Two stored plans of the same cluster: SPUs 3 and 4 joined an RF 2 topic on 0-2."""
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "--partitions", "6", "--replication", "2")
    register_spus(3, 4, online=True)
    return [rebalance()["id"], rebalance()["id"]]


@pytest.mark.django_db
def test_the_database_holds_at_most_one_unfinished_execution(two_plans):
    first, second = (Plan.objects.get(pk=p) for p in two_plans)
    PlanExecution.objects.create(plan=first, state="running")
    with pytest.raises(IntegrityError), transaction.atomic():
        PlanExecution.objects.create(plan=second, state="running")
    PlanExecution.objects.filter(plan=first).update(state="done", finished_at=timezone.now())
    PlanExecution.objects.create(plan=second, state="running")


def applies_logged() -> int:
    out = StringIO()
    call_command("metadata", "dump", "--json", stdout=out)
    return sum(e["type"] == "plan-control" for e in json.loads(out.getvalue()))


def apply_together(plan_ids: list[int], operator, monkeypatch) -> list:
    """POST /apply/ from two threads at once; each has read "no plan running" before
    either writes (the check is slowed down so the reads overlap)."""
    checked = execution._check_applicable

    def slow_check(*args):
        checked(*args)
        time.sleep(0.5)
    monkeypatch.setattr(execution, "_check_applicable", slow_check)
    start, answers = threading.Barrier(len(plan_ids)), [None] * len(plan_ids)
    warm = APIClient()  # the first request builds the middleware (metrics) once, not racing
    warm.force_authenticate(operator)
    assert warm.get("/api/plans/").status_code == 200

    def post(slot: int, plan_id: int) -> None:
        client = APIClient()
        client.force_authenticate(operator)
        start.wait()
        try:
            answers[slot] = client.post(f"/api/plans/{plan_id}/apply/", {}, format="json")
        finally:
            connection.close()
    threads = [threading.Thread(target=post, args=(i, p)) for i, p in enumerate(plan_ids)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return answers


@pytest.mark.django_db(transaction=True)
def test_two_applies_at_once_of_two_plans_one_runs_and_the_other_gets_409(
        two_plans, operator, monkeypatch):
    answers = apply_together(two_plans, operator, monkeypatch)
    assert sorted(a.status_code for a in answers) == [200, 409]
    refused = next(a for a in answers if a.status_code == 409).json()
    assert "one plan at a time" in refused["error"]
    assert PlanExecution.objects.count() == 1
    assert applies_logged() == 1, "a refused apply never enters the log (issue 32)"


@pytest.mark.django_db(transaction=True)
def test_two_applies_at_once_of_one_plan_one_runs_and_the_other_gets_409(
        two_plans, operator, monkeypatch):
    answers = apply_together([two_plans[0]] * 2, operator, monkeypatch)
    assert sorted(a.status_code for a in answers) == [200, 409]
    assert "error" in next(a for a in answers if a.status_code == 409).json()
    assert PlanExecution.objects.count() == 1
    assert applies_logged() == 1


@pytest.mark.django_db
def test_a_save_refused_for_a_lost_lease_records_no_started_move_and_it_starts_later(
        two_plans, monkeypatch):
    plan_id = two_plans[0]
    execution.plan_apply(plan_id=plan_id, by="test")

    def refused(*_args, **_kwargs):
        raise LeaseLost("the replication lease expired and another task took it")
    with monkeypatch.context() as patch:
        patch.setattr(hot_state, "save", refused)
        with pytest.raises(LeaseLost):
            replication_tick(dispatch=LocalQueue())
    e = PlanExecution.objects.get(plan_id=plan_id)
    assert (e.started, e.in_flight, e.moves_failed) == ([], [], 0), \
        "the database must not say a move started that the hot state never got"
    assert execution.plan_wait(plan_id=plan_id, timeout_s=120)
    done = execution.plan_status(plan_id=plan_id)
    assert (done["state"], done["moves_failed"]) == ("done", 0)
    assert done["moves_done"] == done["moves_total"] > 0


def test_the_races_hold_on_postgresql_too():
    """SQLite serialises whole transactions (IMMEDIATE); PostgreSQL's read committed is
    where a read-then-write races: run the two race tests there, in a fresh database of
    their own (whatever database the suite itself runs on)."""
    from tests.helpers import passed_on_postgresql

    passed_on_postgresql(__file__, "at_once", "h19race", 2)


@pytest.mark.django_db
def test_a_move_saved_in_the_hot_state_whose_row_write_was_lost_is_adopted_not_failed(
        two_plans):
    """The process died between the fenced save and the row's write: the next ticks find
    the moves under way towards their targets and follow them to the end."""
    from cluster.engine.engine import current, using

    def losing_its_row_writes(step):
        def step_whose_writes_are_lost(hot, at):
            kept = len(hot.later)
            actions = step(hot, at)
            del hot.later[kept:]  # what the step left for after the commit never runs
            return actions
        return step_whose_writes_are_lost

    plan_id = two_plans[0]
    execution.plan_apply(plan_id=plan_id, by="test")
    engine = current()
    with using(engine.replaced(tick_steps=tuple(map(losing_its_row_writes,
                                                    engine.tick_steps)))):
        replication_tick(dispatch=LocalQueue())
    assert PlanExecution.objects.get(plan_id=plan_id).started == []
    assert hot_state.load().state.replica_sets[("t", _first_moved(plan_id))].move is not None
    assert execution.plan_wait(plan_id=plan_id, timeout_s=120)
    done = execution.plan_status(plan_id=plan_id)
    assert (done["state"], done["moves_failed"]) == ("done", 0)


def _first_moved(plan_id: int) -> int:
    return Plan.objects.get(pk=plan_id).moves[0]["partition"]
