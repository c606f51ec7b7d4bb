"""deploy/prometheus/ through Prometheus's own promtool: the config and the rules check, the
rule unit tests pass, and those tests fail when a rule fires too early or never."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "prometheus"
CONFIG = DEPLOY / "prometheus.yml"
RULE_TESTS = sorted((DEPLOY / "tests").glob("*.yml"))


@pytest.fixture(scope="module")
def promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        pytest.fail("promtool is missing: run `bash scripts/ensure_prometheus.sh` (make test does)")
    return found


def run(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=60)


def rule_files() -> list[Path]:
    return [DEPLOY / name for name in yaml.safe_load(CONFIG.read_text())["rule_files"]]


def alerts(path: Path) -> list[dict]:
    return [rule for group in yaml.safe_load(path.read_text())["groups"]
            for rule in group["rules"] if "alert" in rule]


def test_the_scrape_config_passes_promtool(promtool, tmp_path):
    syntax = run(promtool, "check", "config", "--syntax-only", CONFIG)
    assert syntax.returncode == 0, syntax.stdout + syntax.stderr
    # The full check also opens the token file and the rule files the config names.
    copy = tmp_path / "prometheus.yml"
    (tmp_path / "controlroom-token").write_text("secret\n")
    copy.write_text(re.sub(r"credentials_file: \S+", f"credentials_file: {tmp_path}/controlroom-token",
                           CONFIG.read_text()))
    for rules in rule_files():
        shutil.copy(rules, tmp_path / rules.name)
    full = run(promtool, "check", "config", copy)
    assert full.returncode == 0, full.stdout + full.stderr
    assert f"SUCCESS: {len(rule_files())} rule files found" in full.stdout + full.stderr


def test_every_yaml_file_under_deploy_prometheus_is_the_config_or_a_loaded_rule_file():
    top = {p.name for p in DEPLOY.glob("*.yml")}
    assert top == {CONFIG.name} | {p.name for p in rule_files()}


def test_every_rule_file_passes_promtool_check_rules(promtool):
    checked = run(promtool, "check", "rules", *rule_files())
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SUCCESS" in checked.stdout


def test_the_rule_unit_tests_pass(promtool):
    assert RULE_TESTS
    tested = run(promtool, "test", "rules", *RULE_TESTS)
    assert tested.returncode == 0, tested.stdout + tested.stderr


def test_every_alert_has_a_firing_case_and_a_quiet_one():
    cases: dict[str, list[bool]] = {}
    for path in RULE_TESTS:
        for test in yaml.safe_load(path.read_text())["tests"]:
            for case in test.get("alert_rule_test", []):
                cases.setdefault(case["alertname"], []).append(bool(case.get("exp_alerts")))
    for path in rule_files():
        for rule in alerts(path):
            assert True in cases.get(rule["alert"], []), f"{rule['alert']} never fires"
            assert False in cases[rule["alert"]], f"{rule['alert']} is never quiet"


def test_the_issue_s_alerts_are_all_there():
    names = {rule["alert"] for path in rule_files() for rule in alerts(path)}
    assert {"ControlRoomOfflinePartitions", "ControlRoomUnderReplicatedPartitions",
            "ControlRoomSpuDown", "ControlRoomLeaderImbalance", "ControlRoomPlanStuck",
            "ControlRoomSlowReplicationTick", "ControlRoomMetricsScrapeFailing",
            "ControlRoomReplicationStalled"} <= names


def mutated(tmp_path: Path, alert: str, change: dict) -> list[Path]:
    """The rule files and tests copied under ``tmp_path`` with one alert's fields changed."""
    (tmp_path / "tests").mkdir(parents=True)
    for path in rule_files():
        doc = yaml.safe_load(path.read_text())
        for group in doc["groups"]:
            for rule in group["rules"]:
                if rule.get("alert") == alert:
                    rule.update(change)
        (tmp_path / path.name).write_text(yaml.safe_dump(doc, sort_keys=False))
    for path in RULE_TESTS:
        shutil.copy(path, tmp_path / "tests" / path.name)
    return [tmp_path / "tests" / path.name for path in RULE_TESTS]


ALERTS = [rule["alert"] for path in rule_files() for rule in alerts(path)]


@pytest.mark.parametrize("alert", ALERTS)
def test_the_unit_tests_fail_for_a_rule_without_its_for_or_that_never_fires(
        promtool, tmp_path, alert):
    early = run(promtool, "test", "rules", *mutated(tmp_path / "early", alert, {"for": "0s"}))
    assert early.returncode != 0, f"{alert} firing at once passes its unit tests"
    never = run(promtool, "test", "rules",
                *mutated(tmp_path / "never", alert, {"expr": "vector(1) < 0"}))
    assert never.returncode != 0, f"{alert} never firing passes its unit tests"
