"""A real `make run` stack (scripts/run.py) for the fault tests and the fault campaign.

It runs with its private, persistent Redis (REDIS_PRIVATE=1) under a VAR_DIR
of its own, a SQLite database there, and no REDIS_URL: commands run with the
same environment find the Redis through var/redis.url, as an operator's would.
"""
from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

import psutil

from webapp.redis_server import free_port

ROOT = Path(__file__).resolve().parents[1]


def load_run_script(name: str = "run_script",
                    register: Callable[[str, ModuleType], None] | None = None) -> ModuleType:
    """scripts/run.py as a fresh module (it is a script, not a package member), registered
    under ``name`` (by ``register``, else in sys.modules): its dataclasses look it up."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "run.py")
    module = importlib.util.module_from_spec(spec)
    (register or sys.modules.__setitem__)(name, module)
    spec.loader.exec_module(module)
    return module


class Acked(NamedTuple):
    """An acknowledged record: where it must read back, and what."""
    partition: int
    offset: int
    value: str


@dataclass
class Stack:
    var: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen | None = None
    output: list[str] = field(default_factory=list)
    token: str = ""

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
        return {**env, "VAR_DIR": str(self.var), "PORT": str(self.port), "REDIS_PRIVATE": "1",
                "DATABASE_URL": f"sqlite:///{self.var / 'db.sqlite3'}", "PYTHONUNBUFFERED": "1",
                "REPLICATION_SIMULATED_PRODUCERS": "0", "DJANGO_SETTINGS_MODULE": "webapp.settings"}

    def start(self, seconds: float = 150) -> None:
        """Launch and wait until the app answers."""
        self.launch()
        self.wait_for_line("Control room running at", seconds)

    def launch(self) -> None:
        """Start scripts/run.py; its output collects in ``output``."""
        self.output, self.token = [], ""
        self.proc = subprocess.Popen([sys.executable, "scripts/run.py"], cwd=ROOT,
                                     env=self.env(), text=True, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        threading.Thread(target=self._read, args=(self.proc, self.output), daemon=True).start()

    @staticmethod
    def _read(proc: subprocess.Popen, into: list[str]) -> None:
        for line in proc.stdout:
            into.append(line)

    def wait_for_line(self, needle: str, seconds: float, after: int = 0) -> str:
        """The first line from index ``after`` on that contains ``needle``."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            found = [line for line in self.output[after:] if needle in line]
            if found:
                return found[0]
            if self.proc.poll() is not None:
                time.sleep(0.2)
                break
            time.sleep(0.05)
        raise AssertionError(f"never printed {needle!r}:\n{''.join(self.output)}")

    def tick_owner(self) -> psutil.Process:
        """The worker node the whole tick is routed to (its claim in Redis:
        cluster/adapters/shard_owners.py), else the first one: the process a fault aimed
        at "the worker" must hit to stop the engine."""
        import redis

        client = redis.Redis.from_url(self.hot_home_url())
        try:
            owners = next(client.scan_iter(match="repl:*:shard-owners"), None)
            # Sharded, no node owns the whole tick: shard 0's owner steps a part of it.
            claim = (client.hget(owners, "tick") or client.hget(owners, "0")) if owners else None
        finally:
            client.close()
        if claim is None:
            return self.child("celery -A webapp worker")
        node = claim.decode().rpartition(" ")[0].rpartition(".node.")[2].partition("@")[0]
        return self.child(f"-n {node}@")

    def hot_home_url(self) -> str:
        """The Redis holding the hot state's shared keys (leases, shard owners, the log)."""
        return (self.var / "redis.url").read_text().strip()

    def family(self) -> list[psutil.Process]:
        try:
            return psutil.Process(self.proc.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []

    def child(self, word: str) -> psutil.Process:
        """The supervised process whose command line names ``word`` (worker, beat, daphne)."""
        top = psutil.Process(self.proc.pid).children()
        return next(p for p in top if word in " ".join(p.cmdline()))

    def stop(self, sig: int = signal.SIGINT) -> list[psutil.Process]:
        """Signal the supervisor; return what is still alive 15 s after it exited."""
        family = self.family()
        self.proc.send_signal(sig)
        code = self.proc.wait(60)
        assert code == 0, "".join(self.output)
        _, alive = psutil.wait_procs(family, timeout=15)
        return alive

    def kill_all(self) -> None:
        """Never leave the stack behind, even when a test fails."""
        if self.proc is None:
            return
        family = self.family()
        for p in family:
            try:
                p.kill()
            except psutil.NoSuchProcess:
                pass
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        psutil.wait_procs(family, timeout=10)

    def manage(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env(),
                              text=True, capture_output=True, timeout=timeout)

    # ---- the JSON API -------------------------------------------------------------

    def api(self, method: str, path: str, body: Any = None, timeout: float = 30
            ) -> tuple[int, Any]:
        if not self.token and path != "token/":
            password = (self.var / "operator-password.txt").read_text().strip()
            self.token = self.api("POST", "token/", {"username": "operator",
                                                    "password": password})[1]["token"]
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/api/{path}", data=data,
                                         method=method, headers={"Content-Type": "application/json"})
        if self.token:
            request.add_header("Authorization", f"Token {self.token}")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:
                return answer.status, json.loads(answer.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def produce(self, topic: str, partition: int, value: str, wait: float = 10
                ) -> tuple[int, Any]:
        return self.api("POST", f"topics/{topic}/produce/?wait={wait}",
                        {"partition": partition, "values": [value], "acks": "all"})

    def records(self, topic: str, partition: int) -> dict[int, str]:
        status, rows = self.api("GET", f"topics/{topic}/records/?partition={partition}&max=100000")
        assert status == 200, rows
        return {r["offset"]: r["value"] for r in rows}

    def hws(self, topic: str) -> dict[int, int]:
        status, rows = self.api("GET", f"partitions/?topic={topic}&limit=1000")
        rows = rows["results"] if isinstance(rows, dict) else rows
        return {r["partition"]: r["hw"] for r in rows}


class HotRedis:
    """A private append-only redis-server holding part of the hot state, outside the
    stack's supervisor (as an operator's own servers would be): a fault kills it and
    starts it again on its port and file, or stops and continues it."""

    def __init__(self, data: Path) -> None:
        from webapp.redis_server import start_private_redis

        self.data = data
        self.proc, self.url = start_private_redis(data)

    def restart(self) -> None:
        """Start it again on its port and append-only file (after a kill)."""
        from webapp.redis_server import start_private_redis

        self.proc.wait(10)  # reaped: a zombie would still look like it holds the directory
        self.proc, _ = start_private_redis(self.data, int((self.data / "port").read_text()))

    def send(self, sig: int) -> None:
        os.kill(self.proc.pid, sig)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.send(signal.SIGCONT)  # a stopped server ignores SIGTERM until continued
            self.proc.terminate()
        self.proc.wait(10)


@dataclass
class ShardedStack(Stack):
    """The stack with REPLICATION_SHARDS shards on ``worker_nodes`` supervised worker nodes
    and, when ``hot`` names servers, the hot state spread over them (HOT_STATE_REDIS_URLS;
    the broker and the channel layer stay on the stack's Redis)."""
    shards: int = 4
    worker_nodes: int = 1
    hot: list[HotRedis] = field(default_factory=list)

    @property
    def hot_urls(self) -> tuple[str, ...]:
        return tuple(h.url for h in self.hot)

    def env(self) -> dict[str, str]:
        return {**super().env(), "REPLICATION_SHARDS": str(self.shards),
                "WORKER_NODES": str(self.worker_nodes), "WORKER_CONCURRENCY": "1",
                "HOT_STATE_REDIS_URLS": ",".join(self.hot_urls)}

    def hot_home_url(self) -> str:
        return self.hot_urls[0] if self.hot else super().hot_home_url()

    def kill_all(self) -> None:
        try:
            super().kill_all()
        finally:
            for server in self.hot:
                server.stop()


def lost_records(stack: Stack, topic: str, acked: list[Acked]) -> list[Acked]:
    """Acknowledged records that do not read back at their offset with their value."""
    logs = {p: stack.records(topic, p) for p in {a.partition for a in acked}}
    return [a for a in acked if logs[a.partition].get(a.offset) != a.value]


@dataclass
class ProducerReport:
    acked: list[Acked] = field(default_factory=list)
    ack_times: list[float] = field(default_factory=list)
    failed: int = 0
    unresolved: int = 0  # still pending when the producer gave up polling

    def longest_stall(self, start: float, end: float) -> tuple[float, float]:
        """The longest time without any acknowledgement between ``start`` and ``end``,
        and when (seconds after ``start``) it began."""
        marks = [start, *sorted(t for t in self.ack_times if start <= t <= end), end]
        return max((b - a, a - start) for a, b in zip(marks, marks[1:]))


def produce_until(stack: Stack, topic: str, partition: int, stop: Any,
                  report: ProducerReport, tag: str) -> None:
    """One producer: acks=all writes, one at a time, until ``stop`` is set; polls 202s."""
    n = 0
    while not stop.is_set():
        value = f"{tag}-{n}"
        n += 1
        try:
            status, body = stack.produce(topic, partition, value, wait=5)
            if status == 202:
                status, body = _poll(stack, body)
        except (OSError, ValueError):
            report.failed += 1
            time.sleep(0.2)
            continue
        if status == 200 and body.get("state") == "acknowledged":
            report.acked.append(Acked(partition, body["base_offset"], value))
            report.ack_times.append(time.monotonic())
        elif status == 202:
            report.unresolved += 1
        else:
            report.failed += 1
            time.sleep(0.2)


def _poll(stack: Stack, pending: dict, seconds: float = 40) -> tuple[int, dict]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status, outcome = stack.api("GET", pending["poll"].removeprefix("/api/"))
        if status == 200 and outcome["state"] != "pending":
            return 200, {**pending, "state": outcome["state"]}
        time.sleep(0.2)
    return 202, pending


class HwWatch:
    """Polls a topic's partition HWs through the API; remembers every step backwards."""

    def __init__(self, stack: Stack, topic: str, every_s: float = 0.3) -> None:
        self.stack, self.topic, self.every_s = stack, topic, every_s
        self.stop, self.backwards, self.samples = threading.Event(), [], 0
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self) -> None:
        last: dict[int, int] = {}
        while not self.stop.wait(self.every_s):
            try:
                now = self.stack.hws(self.topic)
            except OSError:
                continue
            self.samples += 1
            self.backwards += [(p, last[p], hw) for p, hw in now.items() if hw < last.get(p, 0)]
            last.update(now)

    def finish(self) -> list[tuple[int, int, int]]:
        self.stop.set()
        self.thread.join(5)
        return self.backwards
