"""Network partitions on the real stack (scripts/run.py: web, worker, beat, private Redis;
the demo's 12 SPUs in racks a-d), docs/network-partitions.md.

A leader cut from the controller (both ways) while acks=1 and acks=all producers write:
its session expires, a new leader is elected from the LRS, the deposed leader keeps
acknowledging acks=1 writes and refuses acks=all; after the heal every acks=all record
reads back and every acks=1 record it lost is in the report, with its offset. Then a
rack split: the split-off rack's SPUs lose their sessions; partitions with an LRS member
elsewhere elect there, the others stay leaderless until the heal, and all come back.
"""
from __future__ import annotations

import json
import time
from typing import Any, Callable

import pytest

from tests.stack import Acked, Stack, lost_records

pytestmark = [pytest.mark.redis, pytest.mark.slow, pytest.mark.timeout(300)]
TOPIC = "net"


def _until(what: str, check: Callable[[], Any], seconds: float = 40) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"never: {what}")


def _partitions(stack: Stack) -> dict[int, dict]:
    status, body = stack.api("GET", f"partitions/?topic={TOPIC}&limit=1000")
    assert status == 200, body
    rows = body["results"] if isinstance(body, dict) else body
    return {r["partition"]: r for r in rows}


def _online(stack: Stack) -> set[int]:
    rows = stack.api("GET", "spus/?limit=1000")[1]
    rows = rows["results"] if isinstance(rows, dict) else rows
    return {r["id"] for r in rows if r["resolution"] == "Online"}


def _produce(stack: Stack, acks: str, value: str) -> tuple[int, dict]:
    return stack.api("POST", f"topics/{TOPIC}/produce/?wait=5",
                     {"partition": 0, "values": [value], "acks": acks})


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    running = Stack(tmp_path_factory.mktemp("net"))
    try:
        running.start()
        status, body = running.api("POST", "topics/", {
            "name": TOPIC, "partition_count": 8, "replication": 3, "min_lrs": 2})
        assert status in (200, 201), body
        _until("the topic replicated", lambda: all(
            p["leader"] is not None for p in _partitions(running).values()) or None)
        yield running
    finally:
        running.kill_all()


def _isolate_leader(stack: Stack, acked_all: list[Acked]) -> tuple[int, list[Acked], int]:
    leader = _partitions(stack)[0]["leader"]
    status, cut = stack.api("POST", "net/cuts/", {"spu": leader, "source": "controller"})
    assert status == 200 and cut["spus"] == [leader], cut
    _until("the leader's session expired and partition 0 re-elected", lambda: (
        leader not in _online(stack) and _partitions(stack)[0]["leader"] not in (None, leader)))
    deposed, refused = [], 0
    for i in range(4):
        status, body = _produce(stack, "1", f"deposed-{i}")
        assert status == 200 and body["state"] == "acknowledged", body
        deposed.append(Acked(0, body["base_offset"], f"deposed-{i}"))
        status, body = _produce(stack, "all", f"refused-{i}")
        refused += status != 200
        assert "acks=all cannot be acknowledged" in (body.get("reason") or body.get("error")
                                                     or ""), body
    return leader, deposed, refused


def test_a_leader_cut_from_the_controller_and_a_rack_split_heal_with_every_loss_reported(stack):
    acked_all = []
    for i in range(5):
        status, body = _produce(stack, "all", f"before-{i}")
        assert status == 200 and body["state"] == "acknowledged", body
        acked_all.append(Acked(0, body["base_offset"], f"before-{i}"))
    leader, deposed, refused = _isolate_leader(stack, acked_all)
    assert refused == 4
    healed = stack.manage("net", "heal", "--all", "--settle", "40", "--json")
    assert healed.returncode == 0 and json.loads(healed.stdout)["rejoined"] == [leader], healed
    for i in range(3):
        status, body = _produce(stack, "all", f"after-{i}")
        assert status == 200 and body["state"] == "acknowledged", body
        acked_all.append(Acked(0, body["base_offset"], f"after-{i}"))
    assert lost_records(stack, TOPIC, acked_all) == []
    report = stack.api("GET", "net/report/")[1]["report"]
    truncated = {(t["partition"], t["offset"]) for t in report["acks1_truncated"]
                 if t["topic"] == TOPIC}
    assert {(a.partition, a.offset) for a in deposed} <= truncated
    assert not {a.value for a in deposed} & set(stack.records(TOPIC, 0).values())
    assert report["refused_total"] >= 4 and report["leaderless_ms"]
    _rack_split(stack)


def _rack_split(stack: Stack) -> None:
    """rack-a (SPUs 0-2) against the rest: the SC sits with the larger side."""
    before = _partitions(stack)
    inside = {0, 1, 2}
    status, cut = stack.api("POST", "net/cuts/", {"racks": "rack-a"})
    assert status == 200 and cut["spus"] == [0, 1, 2], cut
    _until("rack-a's sessions expired", lambda: not inside & _online(stack))
    stranded = {p for p, row in before.items() if set(row["lrs"]) <= inside}
    after = _until("the elections settled", lambda: (
        rows := _partitions(stack)) and all(
            r["resolution"] in ("Online", "Offline") for r in rows.values()) and rows)
    for p, row in after.items():
        if p in stranded:
            assert row["leader"] is None, (p, row)  # its whole LRS is cut off: no clean leader
        else:
            assert row["leader"] not in inside and row["leader"] is not None, (p, row)
    assert stack.api("GET", "net/cuts/")[1][0]["kind"] == "racks"
    status, out = stack.api("POST", "net/heal/", {"all": True})
    assert status == 200 and out["rejoined"] == [0, 1, 2], out
    _until("every partition led again", lambda: all(
        r["leader"] is not None for r in _partitions(stack).values()))
    assert stack.api("GET", "net/cuts/")[1] == []
