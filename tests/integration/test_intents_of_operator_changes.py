"""Every operator change is an intent entry of the metadata log, with who made it, right
after its command and with no worker running (issue 32); a refused command logs none."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from cluster.services.records import topic_set_producer_rate
from tests.helpers import refused, run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]

INTENTS = {"topic-create", "topic-provision", "topic-delete", "topic-update",
           "spu-register", "spu-unregister", "spu-update", "spu-status", "outage",
           "plan-control", "healing-set"}


def dump() -> list[dict]:
    out = StringIO()
    call_command("metadata", "dump", "--json", stdout=out)
    return json.loads(out.getvalue())


def intents() -> list[dict]:
    return [e for e in dump() if e["type"] in INTENTS]


def new_intents(before: int) -> list[dict]:
    """The intents written since the log's offset ``before``."""
    return [e for e in intents() if e["offset"] > before]


def head() -> int:
    entries = dump()
    return entries[-1]["offset"] if entries else 0


def test_spu_register_update_and_unregister_are_intents_by_the_cli(redis_url):
    run("spu", "register", "--id", "1", "--rack", "a", "--public", "h:9005")
    [reg] = intents()
    assert (reg["type"], reg["spu"], reg["rack"], reg["public"], reg["by"]) == (
        "spu-register", 1, "a", "h:9005", "cli")
    mark = head()
    run("spu", "update", "1", "--rack", "b", "--private", "h:9100")
    [upd] = new_intents(mark)
    assert upd["type"] == "spu-update" and upd["by"] == "cli"
    assert upd["changed"]["rack"] == {"from": "a", "to": "b"}
    assert upd["changed"]["private_endpoint"]["to"] == "h:9100"
    mark = head()
    run("spu", "update", "1", "--rack", "b")  # nothing changes: nothing to log
    assert new_intents(mark) == []
    run("spu", "unregister", "1")
    [gone] = new_intents(mark)
    assert (gone["type"], gone["spu"], gone["forced"], gone["by"]) == (
        "spu-unregister", 1, False, "cli")


def test_topic_delete_and_a_setting_change_are_intents(redis_url):
    run("spu", "register", "--id", "1")
    run("topic", "create", "t", "-p", "1", "-r", "1")
    mark = head()
    topic_set_producer_rate(name="t", rate=5, by="api-user")
    [config] = new_intents(mark)
    assert (config["type"], config["topic"], config["by"]) == ("topic-update", "t", "api-user")
    assert config["changed"] == {"producer_rate": {"from": 0.0, "to": 5}}
    mark = head()
    run("topic", "delete", "t")
    [delete] = new_intents(mark)
    assert (delete["type"], delete["topic"], delete["by"]) == ("topic-delete", "t", "cli")


def test_a_topic_waiting_for_spus_is_provisioned_by_the_register_that_cures_it(redis_url):
    run("spu", "register", "--id", "1")
    run("topic", "create", "w", "-p", "2", "-r", "2")
    [create] = [e for e in intents() if e["type"] == "topic-create"]
    assert "replica_map" not in create  # waiting: no partitions yet
    mark = head()
    run("spu", "register", "--id", "2")
    kinds = [(e["type"], e["by"]) for e in new_intents(mark)]
    assert kinds == [("spu-register", "cli"), ("topic-provision", "topic-controller")]


def test_outages_are_intents_with_their_spus_and_rack(redis_url):
    for spu, rack in ((1, "a"), (2, "a"), (3, "b")):
        run("spu", "register", "--id", str(spu), "--rack", rack)
    mark = head()
    run("rack", "online", "a")
    online = new_intents(mark)
    # The operator's intent first, then the SPUs' statuses it caused (the log first).
    assert online[0] == {**online[0], "type": "outage", "action": "online", "spus": [1, 2],
                         "rack": "a", "by": "cli"}
    assert [(e["type"], e.get("spu"), e.get("to")) for e in online[1:]] == [
        ("spu-status", 1, "Online"), ("spu-status", 2, "Online")]
    for command, action in ((("spu", "offline", "1"), "offline"),
                            (("spu", "kill", "2", "--no-wait"), "kill"),
                            (("spu", "online", "2"), "online"),
                            (("rack", "offline", "a"), "offline")):
        mark = head()
        run(*command)
        outage = new_intents(mark)[0]
        assert (outage["type"], outage["action"], outage["by"]) == ("outage", action, "cli")
    assert outage["spus"] == [1, 2] and outage["rack"] == "a"


def test_a_refused_command_logs_no_intent(redis_url):
    run("spu", "register", "--id", "1", "--rack", "a")
    run("spu", "online", "1")
    run("topic", "create", "t", "-p", "1", "-r", "1")
    mark = head()
    refused("spu", "register", "--id", "1")  # already registered
    refused("spu", "update", "1", "--public", "no port")
    refused("spu", "update", "9", "--rack", "b")
    refused("spu", "unregister", "1")  # it holds a replica
    refused("spu", "offline", "9")
    refused("rack", "offline", "nowhere")
    refused("topic", "delete", "nothing")
    run("spu", "online", "1")  # already online: nothing changed, nothing logged
    assert new_intents(mark) == []


def test_an_api_change_names_the_signed_in_user_and_a_refused_request_logs_nothing(
        redis_url, api):
    assert api.post("/api/spus/", {"id": 3, "rack": "rack-a"}, format="json").status_code == 201
    assert api.post("/api/spus/", {"id": 3}, format="json").status_code == 409
    assert api.post("/api/spus/", {"id": -1}, format="json").status_code == 400
    assert api.post("/api/racks/rack-a/offline/", {}, format="json").status_code < 300
    assert api.post("/api/racks/nowhere/offline/", {}, format="json").status_code == 404
    made = [(e["type"], e["by"]) for e in intents()]
    assert made == [("spu-register", "op"), ("outage", "op"), ("spu-status", "op")]
    assert [t for t, _ in made].count("spu-register") == 1


def test_an_spu_group_s_managed_spus_are_registered_and_unregistered_in_the_log(redis_url):
    run("spg", "create", "g", "--replicas", "2", "--min-id", "10", "--rack", "r")
    made = [(e["type"], e["spu"], e.get("rack"), e["by"]) for e in intents()]
    assert made == [("spu-register", 10, "r", "spg-controller"),
                    ("spu-register", 11, "r", "spg-controller")]
    mark = head()
    run("spg", "scale", "g", "--replicas", "1")
    assert [(e["type"], e["spu"]) for e in new_intents(mark)] == [("spu-unregister", 11)]
    mark = head()
    run("spg", "delete", "g")
    assert [(e["type"], e["spu"], e["by"]) for e in new_intents(mark)] == [
        ("spu-unregister", 10, "cli")]


def test_healing_settings_are_intents_and_a_refused_one_logs_none(redis_url):
    run("healing", "enable", "--notify-only")
    run("healing", "set", "spu_down_alert_after_s", "2")
    mark = head()
    refused("healing", "set", "spu_down_alert_after_s", "minus one")
    refused("healing", "set", "no_such_setting", "2")
    assert new_intents(mark) == []
    run("healing", "disable")
    made = [(e["type"], e["name"], e["value"], e["by"]) for e in intents()]
    assert made == [("healing-set", "mode", "notify-only", "cli"),
                    ("healing-set", "spu_down_alert_after_s", 2, "cli"),
                    ("healing-set", "mode", "off", "cli")]


def test_plan_apply_pause_resume_and_cancel_are_intents_with_who_asked(redis_url):
    from tests.helpers import register_spus

    register_spus(0, 1, 2, 3, online=True)
    run("topic", "create", "t", "--partitions", "12", "--replication", "2")
    register_spus(4, 5, online=True)
    plan = json.loads(run("plan", "rebalance", "--json"))
    mark = head()
    for action in ("apply", "pause", "resume", "cancel"):
        run("plan", action, str(plan["id"]))
    made = [(e["action"], e["plan"], e["by"]) for e in new_intents(mark)
            if e["type"] == "plan-control"]
    assert made == [(a, plan["id"], "cli") for a in ("apply", "pause", "resume", "cancel")]
    [apply] = [e for e in new_intents(mark) if e.get("action") == "apply"]
    assert apply["params"]["moves"] == len(plan["moves"])
