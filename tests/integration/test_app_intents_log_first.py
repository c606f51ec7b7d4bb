"""The log first for the other apps' intents and an SPU group's SPUs (issue 32): `plan
apply/pause/resume/cancel`, `healing enable/disable/set` and `spg create/scale/delete`
append their intents before any row is written; the planner's, healing's and the SPUs'
rows are the projection of those entries, there when the command returned, with no worker
running; the rows can be written again from the log, and a second replay changes nothing."""
from __future__ import annotations

import json
import time
from io import StringIO
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from cluster.core.replication import intents
from cluster.models import ClusterState, Event, Spu
from cluster.projections import store as store_projection
from cluster.services import spg_create
from healing.models import HealingConfig
from history.present import moment_view
from history.selectors import parse_point
from planner.models import PlanExecution
from tests.helpers import log_dumped as dumped, log_head as head
from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]


def logged_first(before: int, kind: str) -> list[dict]:
    """The entries of ``kind`` `metadata dump` lists past ``before``, each checked to be
    logged first and already applied by the store, its event row carrying its offset."""
    found = [e for e in dumped() if e["offset"] > before and e["type"] == kind]
    for entry in found:
        assert entry["log_first"] is True
        assert store_projection.applied_offset() >= entry["offset"]
    return found


def refused(*command: str) -> None:
    with pytest.raises(CommandError):
        call_command(*command, stdout=StringIO(), stderr=StringIO())


def replay_from(offset: int) -> None:
    ClusterState.objects.filter(pk=ClusterState.SINGLETON).update(applied_offset=offset)
    store_projection.catch_up()


def events_from(offset: int) -> list[tuple]:
    return list(Event.objects.filter(log_offset__gt=offset).order_by("log_offset").values_list(
        "log_offset", "actor", "object_type", "object_name", "operation", "params"))


def execution_row(plan_id: int) -> dict:
    row = PlanExecution.objects.filter(plan_id=plan_id).values().first()
    return {k: v for k, v in row.items() if k != "id"}


def a_plan() -> int:
    register_spus(0, 1, 2, 3, online=True)
    run("topic", "create", "t", "--partitions", "12", "--replication", "2")
    register_spus(4, 5, online=True)
    return json.loads(run("plan", "rebalance", "--json"))["id"]


def test_plan_controls_are_logged_first_and_the_execution_row_is_their_projection(redis_url):
    plan = a_plan()
    mark = head()
    for action, state in (("apply", "running"), ("pause", "paused"), ("resume", "running"),
                          ("cancel", "cancelled")):
        before = head()
        run("plan", action, str(plan))
        [entry] = logged_first(before, "plan-control")
        assert (entry["action"], entry["plan"], entry["by"]) == (action, plan, "cli")
        assert PlanExecution.objects.get(plan_id=plan).state == state
        event = Event.objects.get(log_offset=entry["offset"])
        assert (event.actor, event.object_name, event.operation) == ("cli", str(plan), action)
    row, events = execution_row(plan), events_from(mark)
    assert row["created_by"] == "cli" and row["reason"] == "cancelled"

    # Written again from the log alone: the row and the events are the entries' projection.
    PlanExecution.objects.all().delete()
    Event.objects.filter(log_offset__gt=mark).delete()
    replay_from(mark)
    assert execution_row(plan) == row and events_from(mark) == events
    replay_from(mark)  # a second replay changes nothing
    assert execution_row(plan) == row and events_from(mark) == events


def test_a_refused_plan_control_logs_nothing(redis_url):
    plan = a_plan()
    mark = head()
    refused("plan", "pause", str(plan))  # never applied
    refused("plan", "apply", str(plan), "--max-moves", "0")
    assert [e for e in dumped() if e["offset"] > mark] == []
    assert not PlanExecution.objects.exists()


def healing_row() -> tuple:
    return HealingConfig.objects.values_list("mode", "values").get(pk=HealingConfig.SINGLETON)


def test_healing_settings_are_logged_first_and_the_row_is_their_projection(redis_url):
    mark = head()
    for command, name, value, check in (
            (("enable", "--notify-only"), "mode", "notify-only",
             lambda: healing_row()[0] == "notify-only"),
            (("set", "spu_down_alert_after_s", "2"), "spu_down_alert_after_s", 2,
             lambda: healing_row()[1]["spu_down_alert_after_s"] == 2),
            (("set", "moves_per_hour", "7"), "moves_per_hour", 7,
             lambda: healing_row()[1] == {"spu_down_alert_after_s": 2, "moves_per_hour": 7}),
            (("disable",), "mode", "off", lambda: healing_row()[0] == "off")):
        before = head()
        run("healing", *command)
        [entry] = logged_first(before, "healing-set")
        assert (entry["name"], entry["value"], entry["by"]) == (name, value, "cli")
        assert check()
        assert Event.objects.get(log_offset=entry["offset"]).object_name == name
    before = head()
    run("healing", "disable")  # already off: nothing changes, nothing logged
    assert head() == before
    row, events = healing_row(), events_from(mark)

    HealingConfig.objects.update(mode="heal", values={})
    Event.objects.filter(log_offset__gt=mark).delete()
    replay_from(mark)
    assert healing_row() == row and events_from(mark) == events
    replay_from(mark)
    assert healing_row() == row and events_from(mark) == events


def managed() -> list[tuple]:
    return list(Spu.objects.order_by("id").values_list(
        "id", "spu_type", "rack", "group__name", "public_endpoint", "private_endpoint"))


def just_after(*command: str) -> str:
    run(*command)
    now = int(time.time() * 1000)
    while int(time.time() * 1000) <= now:
        time.sleep(0.001)
    return datetime.fromtimestamp(now / 1000, UTC).isoformat(timespec="milliseconds")


def spus_at(when: str) -> dict[int, str]:
    return {s["spu"]: s["rack"] for s in moment_view(parse_point(when))["spus"]}


def test_an_spu_group_s_spus_are_logged_first_and_history_shows_them(redis_url):
    mark = head()
    created = just_after("spg", "create", "g", "--replicas", "2", "--min-id", "10",
                         "--rack", "r")
    made = logged_first(mark, "spu-register")
    assert [(e["spu"], e["group"], e["by"]) for e in made] == [
        (10, "g", "spg-controller"), (11, "g", "spg-controller")]
    assert managed() == [(10, "managed", "r", "g", "g-10:9005", "g-10:9006"),
                         (11, "managed", "r", "g", "g-11:9005", "g-11:9006")]
    assert [Event.objects.get(log_offset=e["offset"]).operation for e in made] == [
        "provision", "provision"]
    assert spus_at(created) == {10: "r", 11: "r"}

    before = head()
    grown = just_after("spg", "scale", "g", "--replicas", "3")
    assert [e["spu"] for e in logged_first(before, "spu-register")] == [12]
    assert spus_at(grown) == {10: "r", 11: "r", 12: "r"}
    rows, events = managed(), events_from(mark)

    # Written again from the log alone (the group's row is not in the log, and stays).
    Spu.objects.all().delete()
    Event.objects.filter(log_offset__gt=mark).delete()
    replay_from(mark)
    assert managed() == rows and events_from(mark) == events
    replay_from(mark)
    assert managed() == rows and events_from(mark) == events

    before = head()
    shrunk = just_after("spg", "scale", "g", "--replicas", "1")
    gone = logged_first(before, "spu-unregister")
    assert [(e["spu"], e["by"]) for e in gone] == [(11, "spg-controller"),
                                                     (12, "spg-controller")]
    assert [Event.objects.get(log_offset=e["offset"]).operation for e in gone] == [
        "terminate", "terminate"]
    assert [s[0] for s in managed()] == [10] and spus_at(shrunk) == {10: "r"}
    before = head()
    deleted = just_after("spg", "delete", "g")
    assert [(e["spu"], e["by"]) for e in logged_first(before, "spu-unregister")] == [
        (10, "cli")]
    assert managed() == [] and spus_at(deleted) == {}


def test_a_refused_spg_command_logs_nothing(redis_url):
    run("spg", "create", "g", "--replicas", "1", "--min-id", "10")
    run("spu", "register", "--id", "11")
    mark = head()
    refused("spg", "create", "g", "--replicas", "1")  # exists
    refused("spg", "create", "h", "--replicas", "0")
    refused("spg", "scale", "nothing", "--replicas", "2")
    assert head() == mark


def test_an_spu_group_made_in_a_caller_s_transaction_writes_its_rows_then_logs(redis_url):
    mark = head()
    with transaction.atomic():
        spg_create(name="g", replicas=1, min_id=20, by="test")
        assert managed() == [(20, "managed", "", "g", "g-20:9005", "g-20:9006")]
        assert head() == mark  # its rollback must undo the SPUs: nothing logged yet
    [entry] = [e for e in dumped() if e["offset"] > mark and e["type"] in intents.KINDS]
    assert (entry["type"], entry["spu"], "log_first" in entry) == ("spu-register", 20, False)


def test_a_detection_run_writes_its_rows_first_then_logs_its_events_under_no_lease(
        redis_url, monkeypatch):
    """Healing logs its events once the run's rows committed (issue 32), not in a database
    transaction wrapped in the engine's lease, and through no unit of work: they are no
    engine state. A quiet run logs nothing."""
    from cluster import ports
    from cluster.services.outages import spu_offline
    from healing.models import Anomaly
    from healing.services import healing_check

    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "--partitions", "3", "--replication", "2")
    run("healing", "enable", "--notify-only")
    appends, units, real = [], [], ports.append_entries

    def watched(entries):
        appends.append((transaction.get_connection().in_atomic_block,
                        list(Anomaly.objects.values_list("state", flat=True))))
        return real(entries)

    monkeypatch.setattr(ports, "append_entries", watched)
    monkeypatch.setattr(ports, "unit", lambda **kw: units.append(kw))
    spu_offline(spu_id=2)
    mark, t0 = head(), int(time.time() * 1000)
    healing_check(now_ms=t0)
    assert appends == [(False, ["detected"])] and units == []
    [entry] = [e for e in dumped() if e["offset"] > mark and e["type"] == "event"]
    assert (entry["actor"], entry["object_type"], entry["operation"]) == (
        "self-healing", "anomaly", "detected")
    assert "log_first" not in entry
    assert Event.objects.get(log_offset=entry["offset"]).actor == "self-healing"
    healing_check(now_ms=t0 + 100)  # nothing changed: nothing logged
    assert len(appends) == 1


def test_a_detection_run_logs_its_events_while_a_unit_holds_every_lease(redis_url):
    """A whole tick holds every lease for seconds at 100,000 partitions (an SPU changing
    status): a detection run that found an anomaly then logs its events without waiting
    for it, and the engine's controllers see no new intent in them."""
    import threading

    from django import db

    from cluster import ports
    from cluster.adapters import metadata_log
    from cluster.services.outages import spu_offline
    from healing.services import healing_check

    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "--partitions", "3", "--replication", "2")
    run("healing", "enable", "--notify-only")
    spu_offline(spu_id=2)
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with ports.unit(whole=True):
                held.set()
                release.wait(60)
        finally:
            db.connections.close_all()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(30)
        mark, intents_head = head(), metadata_log.intents_head()
        healing_check(now_ms=int(time.time() * 1000))
        assert holder.is_alive()  # the unit still holds every lease
        [entry] = [e for e in dumped() if e["offset"] > mark and e["type"] == "event"]
        assert Event.objects.get(log_offset=entry["offset"]).operation == "detected"
        assert metadata_log.intents_head() == intents_head
    finally:
        release.set()
        holder.join()


def test_a_plan_applied_in_a_caller_s_transaction_writes_its_row_then_logs(redis_url):
    """As self-healing applies its own plan within its run: the row through the same
    projection at once, the entry after the commit (not ``log_first``: replay passes it by)."""
    from planner.execution import plan_apply

    plan = a_plan()
    mark = head()
    with transaction.atomic():
        plan_apply(plan_id=plan, by="test")
        assert PlanExecution.objects.get(plan_id=plan).created_by == "test"
        assert head() == mark
    [entry] = [e for e in dumped() if e["offset"] > mark and e["type"] == "plan-control"]
    assert (entry["action"], entry["by"], "log_first" in entry) == ("apply", "test", False)


def test_self_healing_s_apply_of_its_own_plan_is_logged_first(redis_url):
    from cluster.services.outages import spu_offline
    from healing.models import Anomaly
    from healing.services import healing_check

    for rack, ids in (("a", (0, 1)), ("b", (2, 3)), ("c", (4, 5))):
        register_spus(*ids, rack=rack, online=True)
    run("topic", "create", "t", "--partitions", "6", "--replication", "3", "--min-lrs", "2")
    run("healing", "enable")
    run("healing", "set", "spu_down_alert_after_s", "2")
    run("healing", "set", "spu_down_heal_after_s", "5")
    spu_offline(spu_id=4)
    t0 = int(time.time() * 1000)
    for at in (t0, t0 + 2_000):
        healing_check(now_ms=at)
    mark = head()
    healing_check(now_ms=t0 + 5_000)
    anomaly = Anomaly.objects.get()
    assert anomaly.state == "applying" and anomaly.plan_id is not None
    [entry] = logged_first(mark, "plan-control")
    assert (entry["action"], entry["plan"], entry["by"]) == (
        "apply", anomaly.plan_id, "self-healing")
    assert PlanExecution.objects.get(plan_id=anomaly.plan_id).created_by == "self-healing"
    automatic = Event.objects.filter(actor="self-healing", log_offset__gt=mark)
    assert {e.operation for e in automatic} == {"create", "apply", "applying"}


def test_an_spu_group_s_spus_are_one_append_at_consecutive_offsets(redis_url, monkeypatch):
    """A hundred SPUs were a hundred appends and catch-ups (1.7 s for `spg create
    --replicas 100`): now one script appends them all, in order, and one catch-up applies
    them, the intents head moved to the last."""
    from cluster.adapters import metadata_log
    from cluster.adapters.redis_keys import bound_to_store, client

    calls = []
    real = metadata_log.append_intents
    monkeypatch.setattr(metadata_log, "append_intents",
                        lambda entries, **kw: calls.append(len(entries)) or real(entries, **kw))
    mark = head()
    just_after("spg", "create", "g", "--replicas", "5", "--min-id", "30")
    made = logged_first(mark, "spu-register")
    assert calls == [5]
    assert [e["spu"] for e in made] == [30, 31, 32, 33, 34]
    assert [e["offset"] for e in made] == list(range(made[0]["offset"], made[0]["offset"] + 5))
    with bound_to_store():
        assert int(client().get(metadata_log.intents_head_key())) == made[-1]["offset"]
    assert [s[0] for s in managed()] == [30, 31, 32, 33, 34]


def test_an_spu_group_s_spus_are_written_at_once_when_redis_refuses_the_append(
        redis_url, monkeypatch):
    import redis as redis_lib
    from cluster.adapters import metadata_log

    def refuse(entries, **kw):
        raise redis_lib.exceptions.ConnectionError("down")

    monkeypatch.setattr(metadata_log, "append_intents", refuse)
    mark = head()
    spg_create(name="g", replicas=3, min_id=40, by="test")
    assert [s[0] for s in managed()] == [40, 41, 42]
    assert head() == mark
