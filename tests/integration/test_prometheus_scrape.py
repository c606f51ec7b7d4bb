"""A real Prometheus scraping the real stack (scripts/run.py, private Redis) every second:
an SPU taken offline raises the under-replicated count, the shipped alert goes pending then
firing, and it resolves once the SPU is back; with METRICS_TOKEN set and without."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.stack import ROOT, Stack
from webapp.redis_server import free_port

pytestmark = [pytest.mark.redis, pytest.mark.slow]
ALERTS = ROOT / "deploy" / "prometheus" / "alerts.yml"
UNDER = "ControlRoomUnderReplicatedPartitions"
TOKEN = "prometheus-scrape-token"
SPU = "0"


@dataclass
class TokenStack(Stack):
    metrics_token: str = ""

    def env(self) -> dict[str, str]:
        return {**super().env(), "METRICS_TOKEN": self.metrics_token}


class Prometheus:
    """Prometheus on a free loopback port with a temporary data dir; its HTTP API."""

    def __init__(self, workdir: Path, target_port: int, token: str) -> None:
        binary = shutil.which("prometheus")
        if binary is None:
            pytest.fail("prometheus is missing: run `bash scripts/ensure_prometheus.sh` "
                        "(make test does)")
        self.port = free_port()
        config = workdir / "prometheus.yml"
        config.write_text(yaml.safe_dump(scrape_config(target_port, token)))
        (workdir / "alerts.yml").write_text(yaml.safe_dump(rules_in_seconds()))
        self.log = open(workdir / "prometheus.log", "wb")
        self.proc = subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={workdir / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn"],
            stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(lambda: self.ready(), 30, "Prometheus ready")

    def ready(self) -> bool:
        assert self.proc.poll() is None, "prometheus exited; see prometheus.log"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/-/ready", timeout=2):
                return True
        except OSError:
            return False

    def api(self, path: str, **params: str) -> Any:
        url = f"http://127.0.0.1:{self.port}/api/v1/{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as answer:
            body = json.loads(answer.read())
        assert body["status"] == "success", body
        return body["data"]

    def value(self, query: str) -> float | None:
        """The single value of an instant query, None while it returns nothing."""
        result = self.api("query", query=query)["result"]
        return float(result[0]["value"][1]) if result else None

    def alert_state(self, name: str) -> str | None:
        states = {a["state"] for a in self.api("alerts")["alerts"]
                  if a["labels"]["alertname"] == name}
        return "firing" if "firing" in states else next(iter(states), None)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self.log.close()


def scrape_config(port: int, token: str) -> dict:
    """One job as docs/observability.md has it, and one that never sends a token."""
    target = {"metrics_path": "/metrics", "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
    with_token = {"authorization": {"type": "Bearer", "credentials": token}} if token else {}
    return {"global": {"scrape_interval": "1s", "evaluation_interval": "1s",
                       "scrape_timeout": "1s"},
            "rule_files": ["alerts.yml"],
            "scrape_configs": [{"job_name": "controlroom", **target, **with_token},
                               {"job_name": "controlroom-without-token", **target}]}


def rules_in_seconds() -> dict:
    """The shipped rules, expressions untouched, with every `for:` read in seconds
    instead of minutes (5m -> 5s): the test sees the whole cycle in seconds."""
    doc = yaml.safe_load(ALERTS.read_text())
    for group in doc["groups"]:
        for rule in group["rules"]:
            if "for" in rule:
                rule["for"] = re.sub(r"^(\d+)m$", r"\1s", rule["for"])
    return doc


def wait_for(check: Callable[[], Any], seconds: float, what: str, every: float = 0.2) -> Any:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"waited {seconds} s for {what}")


@pytest.fixture(scope="module", params=["no token", "METRICS_TOKEN"])
def scraped(request, tmp_path_factory) -> Iterator[tuple[TokenStack, Prometheus]]:
    token = TOKEN if request.param == "METRICS_TOKEN" else ""
    stack = TokenStack(tmp_path_factory.mktemp("stack"), metrics_token=token)
    prometheus = None
    try:
        stack.start()
        prometheus = Prometheus(tmp_path_factory.mktemp("prometheus"), stack.port, token)
        yield stack, prometheus
    finally:
        if prometheus is not None:
            prometheus.stop()
        stack.kill_all()


def spu(stack: Stack, action: str) -> None:
    done = stack.manage("spu", action, SPU, "--no-wait")
    assert done.returncode == 0, done.stdout + done.stderr


def under_replicated(prometheus: Prometheus) -> float | None:
    return prometheus.value('sum(controlroom_partitions_under_replicated{job="controlroom"})')


def test_prometheus_sees_an_outage_raise_the_alert_and_its_end_resolve_it(scraped):
    stack, prometheus = scraped
    wait_for(lambda: prometheus.value('up{job="controlroom"}') == 1, 30, "a first good scrape")
    wait_for(lambda: under_replicated(prometheus) == 0, 60, "a healthy cluster")
    assert prometheus.alert_state(UNDER) is None

    spu(stack, "offline")
    wait_for(lambda: (under_replicated(prometheus) or 0) > 0, 30, "under-replicated > 0")
    assert prometheus.value(f'controlroom_spu_up{{job="controlroom",spu="{SPU}"}}') == 0
    seen = [wait_for(lambda: prometheus.alert_state(UNDER), 15, f"{UNDER} pending", 0.1)]
    seen.append(wait_for(lambda: prometheus.alert_state(UNDER) == "firing" and "firing",
                         30, f"{UNDER} firing", 0.1))
    assert seen == ["pending", "firing"]
    assert (prometheus.value('increase(controlroom_lrs_shrinks_total{job="controlroom"}[1m])')
            or 0) > 0

    spu(stack, "online")
    wait_for(lambda: under_replicated(prometheus) == 0, 60, "under-replicated back to 0")
    wait_for(lambda: prometheus.alert_state(UNDER) is None, 15, f"{UNDER} resolved")
    assert prometheus.value(f'controlroom_spu_up{{job="controlroom",spu="{SPU}"}}') == 1


def test_a_scrape_without_the_token_fails_only_when_metrics_token_is_set(scraped):
    stack, prometheus = scraped
    assert prometheus.value('up{job="controlroom"}') == 1
    # Without METRICS_TOKEN loopback may scrape; with it, only a request that sends it.
    expected = 0 if stack.metrics_token else 1
    wait_for(lambda: prometheus.value('up{job="controlroom-without-token"}') == expected, 15,
             f"the scrape without a token to report up {expected}")
    target = next(t for t in prometheus.api("targets")["activeTargets"]
                  if t["labels"]["job"] == "controlroom-without-token")
    assert ("401" in target["lastError"]) == bool(stack.metrics_token), target
