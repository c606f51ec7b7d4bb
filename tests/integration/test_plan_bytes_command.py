"""`plan rebalance --balance bytes` on imported clusters: cost, risk, scope, refusals."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from planner.models import Plan

pytestmark = pytest.mark.django_db
KAFKA = Path(__file__).resolve().parents[1] / "fixtures" / "kafka"
COST_KEYS = {"bytes_moved", "per_spu", "bottleneck_spu", "eta_s", "risk"}


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def refused(*args: str) -> str:
    with pytest.raises(CommandError) as error:
        call_command(*args, stdout=StringIO(), stderr=StringIO())
    assert error.value.returncode == 2
    return str(error.value)


def kafka_import(*extra: str, racks: bool = True) -> dict:
    files = ["--kafka-describe", str(KAFKA / "describe_new.txt"),
             "--kafka-log-dirs", str(KAFKA / "log_dirs_new.txt")]
    if racks:
        files += ["--kafka-brokers", str(KAFKA / "brokers_new.txt")]
    return json.loads(run("cluster", "import", *files, *extra, "--json"))


def test_a_store_import_plans_by_the_imported_bytes():
    kafka_import()
    data = json.loads(run("plan", "rebalance", "--balance", "bytes", "--throttle-bytes-per-s",
                          str(100 * 2 ** 20), "--max-moves-per-spu", "2", "--json"))
    assert COST_KEYS <= data.keys() and {"moves", "metrics", "target"} <= data.keys()
    assert data["bytes_moved"] == data["metrics"]["bytes_moved"] > 0
    rows = {r["spu"]: r for r in data["per_spu"]}
    assert all(r.keys() == {"spu", "bytes_in", "bytes_out", "moves_in", "moves_out"}
               for r in rows.values())
    assert sum(r["bytes_in"] for r in rows.values()) == data["bytes_moved"]
    slowest = max(rows.values(), key=lambda r: max(r["bytes_in"], r["bytes_out"]))
    assert data["bottleneck_spu"] == slowest["spu"]
    assert data["eta_s"] >= max(slowest["bytes_in"], slowest["bytes_out"]) / (100 * 2 ** 20)
    assert {"before", "after"} <= data["risk"].keys()
    assert {r["rack"] for r in data["risk"]["before"]["racks"]} == {
        "eu-west-1a", "eu-west-1b", "eu-west-1c"}
    # clicks-0 sat twice in rack eu-west-1a: losing that rack took it offline; not after.
    assert data["risk"]["before"]["worst_rack"]["offline"] == 1
    assert data["risk"]["after"]["worst_rack"]["offline"] == 0
    assert data["metrics"]["disk_after"] and data["metrics"]["balance"] == "bytes"


def test_the_imported_racks_change_the_plan():
    with_racks = kafka_import("--plan-only")["id"]
    without = kafka_import("--plan-only", racks=False)["id"]
    racked = json.loads(run("plan", "rebalance", "--balance", "bytes", "--snapshot",
                            str(with_racks), "--json"))
    flat = json.loads(run("plan", "rebalance", "--balance", "bytes", "--snapshot",
                          str(without), "--json"))
    assert racked["metrics"]["rack_violations"] == 0
    assert racked["target"] != flat["target"]
    moved = {(m["topic"], m["partition"]) for m in racked["moves"] if m["added"]}
    assert ("clicks", 0) in moved  # leaves the shared rack only when racks are known


def test_capacity_limits_the_plan_and_scope_is_kept():
    snap = kafka_import("--plan-only")["id"]
    data = json.loads(run("plan", "rebalance", "--balance", "bytes", "--snapshot", str(snap),
                          "--topics", "orders", "--json"))
    assert {m["topic"] for m in data["moves"] if m["added"]} <= {"orders"}
    data = json.loads(run("plan", "rebalance", "--balance", "bytes", "--snapshot", str(snap),
                          "--exclude-topics", "orders", "--leaders-only", "--json"))
    assert all(not m["added"] for m in data["moves"]) and data["bytes_moved"] == 0
    message = refused("plan", "rebalance", "--balance", "bytes", "--snapshot", str(snap),
                      "--capacity", "1:1000", "--capacity", "2:1000", "--capacity", "3:1000",
                      "--capacity", "4:1000")
    assert "may hold" in message


def test_count_plans_print_cost_and_risk_too():
    kafka_import()
    data = json.loads(run("plan", "rebalance", "--json"))
    assert COST_KEYS <= data.keys()


@pytest.mark.parametrize("args, reason", [
    (["--capacity", "1:x"], "SPU:BYTES"),
    (["--max-disk-percent", "0"], "--max-disk-percent"),
    (["--snapshot", "999"], "import 999 not found"),
    (["--topics", "nope"], "unknown topic 'nope'"),
    (["--throttle-bytes-per-s", "0"], "positive"),
    (["--from-kafka-json", "x.json"], "has no sizes"),
])
def test_bad_byte_plan_input_exits_2_and_stores_no_plan(args, reason):
    kafka_import()
    plans = Plan.objects.count()
    assert reason in refused("plan", "rebalance", "--balance", "bytes", *args)
    assert Plan.objects.count() == plans


def test_byte_flags_without_balance_bytes_are_refused():
    kafka_import()
    assert "needs --balance bytes" in refused("plan", "rebalance", "--topics", "orders")


def test_bytes_without_sizes_is_refused(tmp_path):
    run("cluster", "import", "--kafka-describe", str(KAFKA / "describe_new.txt"))
    assert "needs partition sizes" in refused("plan", "rebalance", "--balance", "bytes")


def test_export_writes_the_throttle_commands_for_the_moved_partitions(tmp_path):
    snap = kafka_import("--plan-only")["id"]
    data = json.loads(run("plan", "rebalance", "--balance", "bytes", "--snapshot", str(snap),
                          "--json"))
    script = tmp_path / "throttle.sh"
    call_command("plan", "export", str(data["id"]), "--throttle", str(script),
                 "--throttle-bytes-per-s", "1048576", "--rollback", str(tmp_path / "rb.json"),
                 stdout=StringIO(), stderr=StringIO())
    text = script.read_text()
    moved = [m for m in data["moves"] if m["added"]]
    for move in moved:
        assert f"--entity-name {move['topic']} " in text
        for spu in move["added"]:
            assert f"{move['partition']}:{spu}" in text
    assert "leader.replication.throttled.rate=1048576" in text
    assert text.count("--delete-config") == text.count("--add-config")
    assert "needs --throttle-bytes-per-s" in refused("plan", "export", str(data["id"]),
                                                    "--throttle", str(script))
