"""Prometheus and Alertmanager as real processes for the tests (Debian's packages, see
scripts/ensure_prometheus.sh): each on a free loopback port with a temporary data dir, and
a webhook receiver on loopback that keeps what Alertmanager posts."""
from __future__ import annotations

import json
import shutil
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from webapp.redis_server import free_port


def wait_for(check: Callable[[], Any], seconds: float, what: str | Callable[[], str],
             every: float = 0.2) -> Any:
    """``check()``'s first truthy answer within ``seconds``; ``what`` names it in the
    failure (a callable: told as things stand then)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"waited {seconds} s for {what() if callable(what) else what}")


class Daemon:
    """A Prometheus-family binary on 127.0.0.1:<free port>, ready once /-/ready answers."""

    def __init__(self, binary: str, workdir: Path, config: dict, args: list[str]) -> None:
        path = shutil.which(binary)
        if path is None:
            pytest.fail(f"{binary} is missing: run `bash scripts/ensure_prometheus.sh` "
                        "(make test does)")
        self.name, self.port = binary, free_port()
        (workdir / "config.yml").write_text(yaml.safe_dump(config))
        self.log_path = workdir / f"{binary}.log"
        self.log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [path, f"--config.file={workdir / 'config.yml'}",
             f"--web.listen-address=127.0.0.1:{self.port}", "--log.level=warn", *args],
            stdout=self.log, stderr=subprocess.STDOUT)
        wait_for(self.ready, 30, f"{binary} ready")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ready(self) -> bool:
        assert self.proc.poll() is None, f"{self.name} exited: {self.log_path.read_text()}"
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2):
                return True
        except OSError:
            return False

    def log_tail(self, lines: int = 20) -> str:
        self.log.flush()
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self.log.close()


class Prometheus(Daemon):
    def __init__(self, workdir: Path, config: dict, rules: dict) -> None:
        (workdir / "alerts.yml").write_text(yaml.safe_dump(rules))
        # Alerts are resent to Alertmanager every second, not every minute.
        super().__init__("prometheus", workdir, {**config, "rule_files": ["alerts.yml"]},
                         [f"--storage.tsdb.path={workdir / 'data'}",
                          "--rules.alert.resend-delay=1s"])

    def api(self, path: str, **params: str) -> Any:
        query = urllib.parse.urlencode(params)
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}?{query}", timeout=10) as answer:
            body = json.loads(answer.read())
        assert body["status"] == "success", body
        return body["data"]

    def value(self, query: str) -> float | None:
        """The single value of an instant query, None while it returns nothing."""
        result = self.api("query", query=query)["result"]
        return float(result[0]["value"][1]) if result else None

    def alert_state(self, name: str) -> str | None:
        """``firing``, ``pending`` or None (inactive or resolved) for alert ``name``."""
        states = {a["state"] for a in self.api("alerts")["alerts"]
                  if a["labels"]["alertname"] == name}
        return "firing" if "firing" in states else next(iter(states), None)


class Webhook:
    """An HTTP receiver on loopback keeping every JSON body posted to it."""

    def __init__(self) -> None:
        received: list[dict] = []

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (the http.server API)
                received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.received = received
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def statuses(self, alertname: str) -> list[str]:
        """The status of ``alertname`` in each notification, in order (firing, resolved)."""
        return [a["status"] for body in self.received for a in body["alerts"]
                if a["labels"]["alertname"] == alertname]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class Alertmanager(Daemon):
    def alerts(self) -> Any:
        """The alerts this Alertmanager holds (what Prometheus sent it), for a failure's
        message; the error itself when it does not answer."""
        try:
            with urllib.request.urlopen(f"{self.url}/api/v2/alerts", timeout=5) as answer:
                return json.loads(answer.read())
        except OSError as exc:
            return repr(exc)

    def __init__(self, workdir: Path, webhook: Webhook) -> None:
        config = {"route": {"receiver": "webhook", "group_by": ["alertname", "topic"],
                            "group_wait": "1s", "group_interval": "1s",
                            "repeat_interval": "1h"},
                  "receivers": [{"name": "webhook", "webhook_configs": [
                      {"url": webhook.url, "send_resolved": True}]}]}
        # No cluster listener: a lone Alertmanager needs no gossip port (9094).
        super().__init__("prometheus-alertmanager", workdir, config,
                         [f"--storage.path={workdir / 'data'}", "--cluster.listen-address="])
