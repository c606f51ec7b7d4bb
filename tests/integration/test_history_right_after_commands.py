"""`history at --time T`, for a T just after a command returned, shows what the command did,
with no worker running (issue 32): the command's intent entry is in the log before any
tick adopts the rows, and replay folds it."""
from __future__ import annotations

import json
import time
from datetime import UTC, datetime

import pytest

from history.present import moment_view
from history.selectors import parse_point
from tests.helpers import run

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]


def just_after(*command: str) -> str:
    """Run a command; the time right after it returned (ISO, ms), once the clock moved on
    past it, so that the next command's entries come later."""
    run(*command)
    now = int(time.time() * 1000)
    while int(time.time() * 1000) <= now:
        time.sleep(0.001)
    return datetime.fromtimestamp(now / 1000, UTC).isoformat(timespec="milliseconds")


def rows_at(when: str, topic: str | None = None) -> list[dict]:
    args = ["history", "at", "--time", when, "--json"] + (["--topic", topic] if topic else [])
    return json.loads(run(*args))


def spus_at(when: str) -> dict[int, dict]:
    return {s["spu"]: s for s in moment_view(parse_point(when))["spus"]}


def dumped() -> list[dict]:
    return json.loads(run("metadata", "dump", "--json"))


def test_history_shows_each_command_right_after_it_with_no_worker(redis_url):
    registered = just_after("spu", "register", "--id", "1", "--rack", "a")
    for spu, rack in ((2, "a"), (3, "b")):
        run("spu", "register", "--id", str(spu), "--rack", rack)
    moved = just_after("spu", "update", "3", "--rack", "c")
    run("rack", "online", "a")
    online = just_after("rack", "online", "c")
    created = just_after("topic", "create", "t", "-p", "3", "-r", "3")
    offline = just_after("rack", "offline", "a", "--no-wait")

    assert spus_at(registered) == {1: {**spus_at(registered)[1], "rack": "a",
                                       "state": "offline"}}
    assert spus_at(moved)[3]["rack"] == "c" and spus_at(registered)[1]["rack"] == "a"
    assert {s: v["state"] for s, v in spus_at(online).items()} == {
        1: "online", 2: "online", 3: "online"}

    assert rows_at(online) == []
    rows = rows_at(created)
    assert [(r["topic"], r["partition"]) for r in rows] == [("t", 0), ("t", 1), ("t", 2)]
    assert all(r["leader"] == r["replicas"][0] and r["lrs"] == r["replicas"]
               and r["resolution"] == "Online" for r in rows)

    after = spus_at(offline)
    assert (after[1]["state"], after[2]["state"], after[3]["state"]) == (
        "offline", "offline", "online")
    assert all(r["leader"] not in (1, 2) for r in rows_at(offline) if r["leader"] is not None)

    kinds = [e["type"] for e in dumped()]
    for kind in ("spu-register", "spu-update", "topic-create", "outage"):
        assert kind in kinds


def test_history_at_a_command_s_intent_offset_needs_no_tick(redis_url):
    """The moment at the intent itself, before any entry the engine wrote after it."""
    for spu in (1, 2):
        run("spu", "register", "--id", str(spu), "--rack", "a")
    run("rack", "online", "a")
    run("topic", "create", "t", "-p", "2", "-r", "2")
    run("rack", "offline", "a")
    entries = dumped()
    create = next(e for e in entries if e["type"] == "topic-create")
    outage = next(e for e in entries if e["type"] == "outage" and e["action"] == "offline")
    assert not [e for e in entries
                if e["type"] == "topic-replicated" and e["offset"] < create["offset"]]
    at_create = json.loads(run("history", "at", "--offset", str(create["offset"]), "--json"))
    assert [r["leader"] for r in at_create] == [1, 2]
    view = moment_view(parse_point(str(outage["offset"])))
    assert {s["spu"]: s["state"] for s in view["spus"]} == {1: "offline", 2: "offline"}


def test_history_just_after_a_delete_or_an_unregister_shows_it_gone(redis_url):
    run("spu", "register", "--id", "1")
    run("spu", "online", "1")
    created = just_after("topic", "create", "t", "-p", "1", "-r", "1")
    registered = just_after("spu", "register", "--id", "2")
    unregistered = just_after("spu", "unregister", "2")
    deleted = just_after("topic", "delete", "t")
    assert [r["topic"] for r in rows_at(created)] == ["t"] and rows_at(deleted) == []
    assert 2 in spus_at(registered) and 2 not in spus_at(unregistered)
