"""deploy/: the alert rules and the Grafana dashboard parse and name only exposed metrics."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.helpers import register_spus, run

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "alerts.yml"
DASHBOARD = ROOT / "deploy" / "grafana" / "controlroom.json"
PROMQL_WORDS = {"sum", "count", "min", "max", "avg", "rate", "irate", "increase",
                "histogram_quantile", "absent", "vector", "by", "without", "on", "ignoring",
                "group_left", "group_right", "bool", "and", "or", "unless", "offset"}
DURATION = re.compile(r"^\d+[smhdw]$")
# Series Prometheus writes itself for every scrape, not exposed by /metrics.
SCRAPE_SERIES = {"up", "scrape_duration_seconds", "scrape_samples_scraped"}


def metric_names(expr: str) -> set[str]:
    """Metric names in a PromQL expression: what is left once labels, ranges,
    grouping clauses, functions and operators are taken out."""
    for pattern in (r'"[^"]*"', r"\{[^}]*\}", r"\[[^\]]*\]",
                    r"\b(by|without|on|ignoring)\s*\([^)]*\)"):
        expr = re.sub(pattern, " ", expr)
    words = re.findall(r"\b([A-Za-z_:][A-Za-z0-9_:]*)\b(?!\s*\()", expr)
    return {w for w in words if w not in PROMQL_WORDS}


def rules() -> list[dict]:
    return [rule for group in yaml.safe_load(RULES.read_text())["groups"]
            for rule in group["rules"]]


def dashboard_exprs() -> list[str]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    return [t["expr"] for p in panels for t in p.get("targets", [])]


@pytest.fixture
def exposed(client, db, redis_url) -> set[str]:
    """Every family and sample name of a scrape (after a request, so request series exist)."""
    register_spus(0, 1, 2, rack="rack-a", online=True)
    run("topic", "create", "t", "--partitions", "3", "--replication", "3")
    client.get("/healthz")
    text = client.get("/metrics").content.decode()
    families = list(text_string_to_metric_families(text))
    return {f.name for f in families} | {s.name for f in families for s in f.samples}


def test_the_metric_name_reader_skips_functions_labels_and_ranges():
    expr = 'sum by (le) (rate(a_bucket{job="x"}[5m])) > 0.5 or absent(b) unless on (spu) c'
    assert metric_names(expr) == {"a_bucket", "b", "c"}


def test_every_rule_has_what_prometheus_needs():
    for rule in rules():
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule
        assert re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", rule["alert"])
        assert isinstance(rule["expr"], str) and rule["expr"].strip()
        assert DURATION.match(rule.get("for", "0s"))
        assert rule["labels"]["severity"] in {"warning", "critical"}
        assert rule["annotations"]["summary"]


def test_the_issue_s_alerts_are_there_with_their_thresholds():
    by_name = {r["alert"]: r for r in rules()}
    under = by_name["ControlRoomUnderReplicatedPartitions"]
    assert "controlroom_partitions_under_replicated" in under["expr"]
    assert under["expr"].endswith("> 0") and under["for"] == "5m"
    assert by_name["ControlRoomOfflinePartitions"]["expr"].endswith(
        "(controlroom_partitions_offline) > 0")
    assert by_name["ControlRoomSpuDown"]["expr"] == "controlroom_spu_up == 0"
    assert by_name["ControlRoomLeaderImbalance"]["expr"] == \
        "controlroom_leader_imbalance_ratio > 0.1"
    assert "controlroom_worker_up == 0" in by_name["ControlRoomNoWorkerHeartbeat"]["expr"]


def test_every_rule_names_only_exposed_metrics(exposed):
    for rule in rules():
        assert metric_names(rule["expr"]) <= exposed | SCRAPE_SERIES, rule["alert"]


def test_every_dashboard_panel_names_only_exposed_metrics(exposed):
    exprs = dashboard_exprs()
    assert len(exprs) >= 10
    for expr in exprs:
        assert metric_names(expr) and metric_names(expr) <= exposed, expr


def test_the_dashboard_shows_health_racks_tick_time_and_produce_rate():
    panels = json.loads(DASHBOARD.read_text())["panels"]
    titles = {p["title"] for p in panels}
    assert {"Under-replicated partitions", "Offline partitions", "Leaders per rack",
            "Replication tick time", "Produce rate (records/s)"} <= titles
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids))
