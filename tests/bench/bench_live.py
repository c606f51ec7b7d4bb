"""Live view under load: many WebSocket viewers while a 10,000-partition cluster steps every second.

Run: .venv/bin/python tests/bench/bench_live.py [--viewers 100] [--heatmap-viewers 20]
                                                [--steady-s 20] [--outages 3] [--ramp 50]
Starts the real stack under a temp dir (private Redis, SQLite, daphne, a Celery worker
and beat; tests/stack.py), builds 30 SPUs in 3 racks and 50 topics x 200 partitions
(RF 3) with simulated producers on every topic, then opens ``--viewers`` sockets as the
topic page of ``t00`` opens them and ``--heatmap-viewers`` as the heatmaps page does.
Each viewer follows the page protocol (cluster/live.py): on a sequence gap it fetches the
group's snapshot over HTTP, which is the only HTTP a live page makes. The viewers run in
a process of their own (tests/bench/live_viewers.py), so the CPU the bench prints is
split: daphne, the Celery worker and beat, Redis, and the client driving the viewers.
Prints connected / attempted, the connect time (socket opened -> the server's hello)
p50 / p95 / max and the failures by kind.

``--connect-only`` starts no worker or beat and only reports how fast the viewers connect.
Prints, for a steady window with producers running: messages and bytes per second per
viewer, snapshot requests per second; then takes SPUs offline one by one through the API
and prints p50 / p99 / max of the delay from each leader change of ``t00`` committed (the
controller's status event, written in the committing transaction) to every viewer holding
the new leader. Goal: p99 under 500 ms with 100 + 20 viewers. Figures, not assertions.
"""
from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from tests.live_stack import Stack, running_stack  # noqa: E402

TOPICS, PARTITIONS, SPUS = 50, 200, 30
WATCHED = "t00"
BUILD = f"""
from cluster.models import ClusterState
from cluster.services import spu_connect, spu_register, topic_create
from cluster.services.records import topic_set_producer_rate
ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
for i in range({SPUS}):
    spu_register(spu_id=i, rack="rack-" + "abc"[i % 3], by="bench")
    spu_connect(spu_id=i)
for t in range({TOPICS}):
    topic_create(name=f"t{{t:02d}}", partitions={PARTITIONS}, replication=3, by="bench")
    topic_set_producer_rate(name=f"t{{t:02d}}", rate={2 * PARTITIONS}, by="bench")
"""


def api_post(stack: Stack, path: str, token: str) -> None:
    request = urllib.request.Request(stack.url + path, data=b"", method="POST",
                                     headers={"Authorization": f"Token {token}"})
    urllib.request.urlopen(request, timeout=60).read()


def api_token(stack: Stack) -> str:
    form = urllib.parse.urlencode({"username": "operator", "password": stack.password()})
    with urllib.request.urlopen(stack.url + "/api/token/", data=form.encode(), timeout=60) as r:
        return json.loads(r.read())["token"]


def snapshot(stack: Stack, cookie: str, group: str) -> dict:
    request = urllib.request.Request(
        f"{stack.url}/api/live/snapshot/?group={urllib.parse.quote(group)}",
        headers={"Cookie": f"sessionid={cookie}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def wait_replicated(stack: Stack, cookie: str, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rows = snapshot(stack, cookie, f"topic-{WATCHED}.0")["partitions"]
        if len(rows) == PARTITIONS and all(r["leader"] is not None for r in rows):
            return
        time.sleep(1)
    raise SystemExit("the cluster did not replicate in time")


def leader_changes(db: Path, since: float) -> list[tuple[int, int, float]]:
    """(partition of t00, new leader, committed at) from the controller's status events."""
    rows = sqlite3.connect(db).execute(
        "SELECT object_name, params, at FROM cluster_event WHERE operation = 'status' "
        "AND object_name LIKE ?", (f"{WATCHED}/%",)).fetchall()
    changes = []
    for name, params, at in rows:
        moved = json.loads(params).get("leader")
        stamp = datetime.fromisoformat(at).replace(tzinfo=timezone.utc).timestamp()
        if moved and moved["to"] is not None and stamp >= since:
            changes.append((int(name.split("/")[1]), moved["to"], stamp))
    return changes


def chart_delays(viewers: list[dict], changes: list[tuple[int, int, float]]) -> list[float]:
    """From each leader change committed to the first heatmap redrawn after it, per viewer."""
    got = []
    for _, _, at in changes:
        for viewer in viewers:
            after = [t for t in viewer["charts"] if t >= at]
            if after:
                got.append((after[0] - at) * 1000)
    return got


def delays(viewers: list[dict], changes: list[tuple[int, int, float]]) -> tuple[list[float], int]:
    """Commit -> first arrival of the new leader at each viewer watching the partition."""
    got, missing = [], 0
    for viewer in viewers:
        seen: dict[tuple[int, int], list[float]] = defaultdict(list)
        for partition, leader, at in viewer["leaders"]:
            seen[(partition, leader)].append(at)
        for partition, leader, at in changes:
            arrivals = [t for t in seen.get((partition, leader), []) if t >= at - 0.05]
            if arrivals:
                got.append(max(0.0, arrivals[0] - at) * 1000)
            elif viewer["hello"] is not None:
                missing += 1
    return got, missing


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Cpu:
    """CPU seconds of the server's processes and of the viewers' process, apart."""

    def __init__(self, stack: Stack, client: subprocess.Popen) -> None:
        self.parts = {"daphne": [p for p in stack.procs if "daphne" in " ".join(p.args)],
                      "worker+beat": [p for p in stack.procs if "celery" in " ".join(p.args)],
                      "redis": stack.procs[:1], "client": [client]}

    def sample(self) -> dict[str, float]:
        return {name: sum(_tree_cpu(p.pid) for p in procs) for name, procs in self.parts.items()}


def _tree_cpu(pid: int) -> float:
    try:
        proc = psutil.Process(pid)
        total = sum(proc.cpu_times()[:2])
        for child in proc.children(recursive=True):
            total += sum(child.cpu_times()[:2])
        return total
    except psutil.Error:
        return 0.0


def spent(before: dict[str, float], after: dict[str, float]) -> str:
    return ", ".join(f"{name} {after[name] - before[name]:.1f} s" for name in before)


def scenario(stack: Stack, cookie: str, args: argparse.Namespace, token: str) -> None:
    out = stack.var / "viewers.json"
    client = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("live_viewers.py")), "--url", stack.url,
         "--cookie", cookie, "--watched", WATCHED, "--count", str(PARTITIONS),
         "--viewers", str(args.viewers), "--heatmap-viewers", str(args.heatmap_viewers),
         "--ramp", str(args.ramp), "--out", str(out)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    cpu = Cpu(stack, client)
    before = cpu.sample()
    connected = json.loads(client.stdout.readline())
    print(f"connected: {connected['connected']}/{connected['attempted']} viewers in "
          f"{connected['seconds']:.1f} s (ramp {args.ramp:.0f}/s); {load_average()}")
    print(f"  CPU while connecting: {spent(before, cpu.sample())}")
    window = None
    if not args.connect_only:
        time.sleep(3)
        first, start = cpu.sample(), time.time()
        time.sleep(args.steady_s)
        window = (start, time.time())
        print(f"  CPU in the steady window ({window[1] - window[0]:.1f} s): "
              f"{spent(first, cpu.sample())}")
        since = time.time()
        for spu in range(args.outages):
            api_post(stack, f"/api/spus/{spu}/offline/", token)
            time.sleep(6)
        time.sleep(args.drain_s)
    client.stdin.write("stop\n")
    client.stdin.flush()
    client.wait(timeout=300)
    viewers = json.loads(out.read_text())
    report_connects(viewers)
    if window is not None:
        topic = [v for v in viewers if v["path"].startswith("/ws/topics/")]
        heat = [v for v in viewers if v["path"] == "/ws/cluster/"]
        report_steady(topic, heat, window)
        report_delays(topic, heat, leader_changes(stack.var / "stack.sqlite3", since))


def report_connects(viewers: list[dict]) -> None:
    waits = [(v["hello"] - v["started"]) * 1000 for v in viewers if v["hello"] is not None]
    errors = Counter(v["error"].split(":")[0] for v in viewers
                     if v["hello"] is None and v["error"])
    print(f"  connect (socket opened -> hello): p50 {pct(waits, 0.5):.0f} ms, "
          f"p95 {pct(waits, 0.95):.0f} ms, max {max(waits, default=float('nan')):.0f} ms; "
          f"failures {dict(errors) or 'none'}")


def load_average() -> str:
    """Figures taken on a shared machine mean little without it."""
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def report_steady(topic: list[dict], heat: list[dict], window: tuple[float, float]) -> None:
    seconds = window[1] - window[0]
    print(f"steady window {seconds:.1f} s with producers on all {TOPICS * PARTITIONS:,} "
          f"partitions; {load_average()}")
    for name, group in (("topic page", topic), ("heatmaps", heat)):
        if group:
            inside = [[b for at, b in v["messages"] if window[0] <= at < window[1]] for v in group]
            msgs = statistics.mean(map(len, inside)) / seconds
            kb = statistics.mean(map(sum, inside)) / seconds / 1024
            print(f"  {name:<10} per viewer: {msgs:.2f} messages/s, {kb:.1f} KiB/s")
    snaps = sum(v["snapshots"] for v in topic + heat)
    print(f"  snapshot fetches after sequence gaps over the whole run: {snaps}")


def report_delays(topic: list[dict], heat: list[dict],
                  changes: list[tuple[int, int, float]]) -> None:
    print(f"leader changes of {WATCHED} committed during the outages: {len(changes)}; "
          f"{load_average()}")
    for name, group in (("topic page", topic), ("heatmaps", heat), ("all", topic + heat)):
        got, missing = delays(group, changes)
        if got:
            print(f"  {name:<10} delivery commit -> viewer: p50 {pct(got, 0.5):.0f} ms, "
                  f"p95 {pct(got, 0.95):.0f} ms, p99 {pct(got, 0.99):.0f} ms, "
                  f"max {max(got):.0f} ms ({len(got)} deliveries, {missing} never seen)")
    shifted = chart_delays(heat, changes)
    if shifted:
        print(f"  heatmaps redrawn after a leader change: p50 {pct(shifted, 0.5):.0f} ms, "
              f"p95 {pct(shifted, 0.95):.0f} ms, max {max(shifted):.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--heatmap-viewers", type=int, default=20)
    parser.add_argument("--steady-s", type=float, default=20)
    parser.add_argument("--outages", type=int, default=3)
    parser.add_argument("--ramp", type=float, default=50, help="new viewers per second")
    parser.add_argument("--drain-s", type=float, default=10,
                        help="listening after the last outage before the viewers stop")
    parser.add_argument("--connect-only", action="store_true",
                        help="no worker or beat: only how fast viewers connect to an idle cluster")
    args = parser.parse_args()
    engine = not args.connect_only
    with running_stack(Path(tempfile.mkdtemp(prefix="bench-live-")), before_start=BUILD,
                       worker=engine, beat=engine, worker_concurrency=2) as stack:
        cookie = stack.session_cookie()
        if engine:
            wait_replicated(stack, cookie)
        scenario(stack, cookie, args, api_token(stack))


if __name__ == "__main__":
    main()
