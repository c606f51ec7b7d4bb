"""A real Prometheus scraping the real stack (scripts/run.py, private Redis) every second:
an SPU taken offline raises the under-replicated count, the shipped alert goes pending then
firing and reaches a webhook through a real Alertmanager, and it resolves once the SPU is
back; with METRICS_TOKEN set and without."""
from __future__ import annotations

import re
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

import pytest
import yaml

from tests.prometheus_procs import Alertmanager, Prometheus, Webhook, wait_for
from tests.stack import ROOT, Stack
from tests.waits import EVENT_WAIT_S as WAIT_S

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


class Scraped(NamedTuple):
    stack: TokenStack
    prometheus: Prometheus
    webhook: Webhook
    alertmanager: Alertmanager


def scrape_config(port: int, token: str, alertmanager: str) -> dict:
    """One job as docs/observability.md has it, and one that never sends a token."""
    target = {"metrics_path": "/metrics", "static_configs": [{"targets": [f"127.0.0.1:{port}"]}]}
    with_token = {"authorization": {"type": "Bearer", "credentials": token}} if token else {}
    return {"global": {"scrape_interval": "1s", "evaluation_interval": "1s",
                       "scrape_timeout": "1s"},
            "alerting": {"alertmanagers": [{"static_configs": [{"targets": [alertmanager]}]}]},
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


def _first_metrics(stack: TokenStack, token: str) -> None:
    """The web process's first /metrics (its collectors' imports and first reads) can take
    longer than Prometheus's 1 s scrape timeout on a loaded machine: it is answered once
    before Prometheus starts, so the test's scrapes see the running stack, not its start."""
    request = urllib.request.Request(f"http://127.0.0.1:{stack.port}/metrics",
                                     headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(request, timeout=WAIT_S) as answer:
        assert answer.status == 200


@pytest.fixture(scope="module", params=["no token", "METRICS_TOKEN"])
def scraped(request, tmp_path_factory) -> Iterator[Scraped]:
    token = TOKEN if request.param == "METRICS_TOKEN" else ""
    stack = TokenStack(tmp_path_factory.mktemp("stack"), metrics_token=token)
    webhook, started = Webhook(), []
    try:
        stack.start()
        _first_metrics(stack, token)
        started.append(Alertmanager(tmp_path_factory.mktemp("alertmanager"), webhook))
        config = scrape_config(stack.port, token, f"127.0.0.1:{started[0].port}")
        started.append(Prometheus(tmp_path_factory.mktemp("prometheus"), config,
                                  rules_in_seconds()))
        yield Scraped(stack, started[1], webhook, started[0])
    finally:
        for daemon in reversed(started):
            daemon.stop()
        webhook.stop()
        stack.kill_all()


def spu(stack: Stack, action: str) -> None:
    done = stack.manage("spu", action, SPU, "--no-wait")
    assert done.returncode == 0, done.stdout + done.stderr


def _notifications(prometheus: Prometheus) -> list[str]:
    """Prometheus's own counters of the alerts it sent to Alertmanager (for a failure)."""
    with urllib.request.urlopen(f"{prometheus.url}/metrics", timeout=5) as answer:
        return [line for line in answer.read().decode().splitlines()
                if line.startswith("prometheus_notifications_")]


def under_replicated(prometheus: Prometheus) -> float | None:
    return prometheus.value('sum(controlroom_partitions_under_replicated{job="controlroom"})')


def test_prometheus_sees_an_outage_raise_the_alert_and_its_end_resolve_it(scraped):
    stack, prometheus, webhook, alertmanager = scraped
    wait_for(lambda: prometheus.value('up{job="controlroom"}') == 1, WAIT_S,
             "a first good scrape")
    wait_for(lambda: under_replicated(prometheus) == 0, WAIT_S, "a healthy cluster")
    assert prometheus.alert_state(UNDER) is None

    spu(stack, "offline")
    wait_for(lambda: (under_replicated(prometheus) or 0) > 0, WAIT_S, "under-replicated > 0")
    assert prometheus.value(f'controlroom_spu_up{{job="controlroom",spu="{SPU}"}}') == 0
    wait_for(lambda: prometheus.alert_state(UNDER) == "firing", WAIT_S, f"{UNDER} firing")
    # It was pending first, for its `for:`: Prometheus keeps an ALERTS sample of each
    # evaluation it spent pending. Polling for "pending" instead missed it under load
    # (a poll slower than the 5 s `for:` saw "firing" first, issue 35).
    pending = f'ALERTS{{alertname="{UNDER}",alertstate="pending"}}'
    assert prometheus.value(f"count_over_time({pending}[10m]) > 0") is not None
    assert (prometheus.value('increase(controlroom_lrs_shrinks_total{job="controlroom"}[1m])')
            or 0) > 0

    # Alertmanager tells a receiver of a resolution only after it told it of the firing: an
    # outage ended within its group_wait (commands and ticks are quick now) told it nothing.
    wait_for(lambda: "firing" in webhook.statuses(UNDER), WAIT_S,
             lambda: f"{UNDER} firing at the webhook (it got {webhook.statuses(UNDER)})")
    spu(stack, "online")
    wait_for(lambda: under_replicated(prometheus) == 0, WAIT_S, "under-replicated back to 0")
    wait_for(lambda: prometheus.alert_state(UNDER) is None, WAIT_S, f"{UNDER} resolved")
    assert prometheus.value(f'controlroom_spu_up{{job="controlroom",spu="{SPU}"}}') == 1
    # Through Alertmanager to the receiver: resolved once the SPU is back.
    wait_for(lambda: "resolved" in webhook.statuses(UNDER), WAIT_S,
             lambda: f"{UNDER} resolved at the webhook (it got {webhook.statuses(UNDER)}; "
                     f"Prometheus's alerts then: {prometheus.api('alerts')['alerts']}; "
                     f"Alertmanager's: {alertmanager.alerts()}; Prometheus's Alertmanagers: "
                     f"{prometheus.api('alertmanagers')}; notifications sent/errors/dropped: "
                     f"{_notifications(prometheus)}; "
                     f"Alertmanager's log:\n"
                     f"{alertmanager.log_tail()}\nPrometheus's log:\n{prometheus.log_tail()})")
    assert webhook.statuses(UNDER)[0] == "firing"


def test_a_scrape_without_the_token_fails_only_when_metrics_token_is_set(scraped):
    stack, prometheus, _, _ = scraped
    assert prometheus.value('up{job="controlroom"}') == 1
    # Without METRICS_TOKEN loopback may scrape; with it, only a request that sends it.
    expected = 0 if stack.metrics_token else 1
    wait_for(lambda: prometheus.value('up{job="controlroom-without-token"}') == expected,
             WAIT_S,
             f"the scrape without a token to report up {expected}")
    target = next(t for t in prometheus.api("targets")["activeTargets"]
                  if t["labels"]["job"] == "controlroom-without-token")
    assert ("401" in target["lastError"]) == bool(stack.metrics_token), target
