"""Live view under load: many WebSocket viewers while a 10,000-partition cluster steps every second.

Run: .venv/bin/python tests/bench/bench_live.py [--viewers 100] [--heatmap-viewers 20]
                                                [--steady-s 20] [--outages 3]
Starts the real stack under a temp dir (private Redis, SQLite, daphne, a Celery worker
and beat; tests/stack.py), builds 30 SPUs in 3 racks and 50 topics x 200 partitions
(RF 3) with simulated producers on every topic, then opens ``--viewers`` sockets as the
topic page of ``t00`` opens them and ``--heatmap-viewers`` as the heatmaps page does.
Each viewer follows the page protocol (cluster/live.py): on a sequence gap it fetches the
group's snapshot over HTTP, which is the only HTTP a live page makes.

``--connect-only`` starts no worker or beat and only reports how fast the viewers connect.
Prints, for a steady window with producers running: messages and bytes per second per
viewer, snapshot requests per second; then takes SPUs offline one by one through the API
and prints p50 / p99 / max of the delay from each leader change of ``t00`` committed (the
controller's status event, written in the committing transaction) to every viewer holding
the new leader. Goal: p99 under 500 ms with 100 + 20 viewers. Figures, not assertions.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import websockets  # noqa: E402

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


@dataclass
class Viewer:
    path: str
    messages: int = 0
    bytes: int = 0
    snapshots: int = 0
    seqs: dict[str, int] = field(default_factory=dict)
    # (partition of t00, leader) -> arrival times of rows saying so
    seen: dict[tuple[int, int], list[float]] = field(default_factory=lambda: defaultdict(list))
    charts: list[float] = field(default_factory=list)   # arrivals of fresh heatmaps
    counting: bool = False


class Bench:
    def __init__(self, stack: Stack, cookie: str) -> None:
        self.stack, self.cookie = stack, cookie
        self.stop = asyncio.Event()

    def snapshot(self, group: str) -> dict:
        request = urllib.request.Request(
            f"{self.stack.url}/api/live/snapshot/?group={urllib.parse.quote(group)}",
            headers={"Cookie": f"sessionid={self.cookie}"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())

    async def watch(self, viewer: Viewer) -> None:
        headers = {"Cookie": f"sessionid={self.cookie}", "Origin": self.stack.url}
        url = self.stack.url.replace("http", "ws") + viewer.path
        async with websockets.connect(url, additional_headers=headers, max_size=None,
                                      open_timeout=120) as socket:
            while not self.stop.is_set():
                try:
                    raw = await asyncio.wait_for(socket.recv(), 0.5)
                except asyncio.TimeoutError:
                    continue
                await self.receive(viewer, raw, time.time())

    async def receive(self, viewer: Viewer, raw: str, at: float) -> None:
        message = json.loads(raw)
        if viewer.counting:
            viewer.messages += 1
            viewer.bytes += len(raw)
        if message["type"] == "live.hello":
            viewer.seqs.update(message["groups"])
            return
        group, last = message["group"], viewer.seqs.get(message["group"])
        self.note(viewer, message, at)
        viewer.seqs[group] = max(last or 0, message["seq"])
        if last is not None and message["seq"] > last + 1:
            viewer.snapshots += 1
            snap = await asyncio.to_thread(self.snapshot, group)
            self.note(viewer, snap, time.time())
            viewer.seqs[group] = max(viewer.seqs[group], snap["seq"])

    @staticmethod
    def note(viewer: Viewer, data: dict, at: float) -> None:
        if data.get("charts"):
            viewer.charts.append(at)
        for row in data.get("partitions", []):
            if row["topic"] == WATCHED and row["leader"] is not None:
                viewer.seen[(row["partition"], row["leader"])].append(at)


def api_post(stack: Stack, path: str, token: str) -> None:
    request = urllib.request.Request(stack.url + path, data=b"", method="POST",
                                     headers={"Authorization": f"Token {token}"})
    urllib.request.urlopen(request, timeout=60).read()


def api_token(stack: Stack) -> str:
    form = urllib.parse.urlencode({"username": "operator", "password": stack.password()})
    with urllib.request.urlopen(stack.url + "/api/token/", data=form.encode(), timeout=60) as r:
        return json.loads(r.read())["token"]


def wait_replicated(bench: Bench, timeout_s: float = 300) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rows = bench.snapshot(f"topic-{WATCHED}.0")["partitions"]
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


def chart_delays(viewers: list[Viewer], changes: list[tuple[int, int, float]]) -> list[float]:
    """From each leader change committed to the first heatmap redrawn after it, per viewer."""
    got = []
    for _, _, at in changes:
        for viewer in viewers:
            after = [t for t in viewer.charts if t >= at]
            if after:
                got.append((after[0] - at) * 1000)
    return got


def delays(viewers: list[Viewer], changes: list[tuple[int, int, float]]) -> tuple[list[float], int]:
    got, missing = [], 0
    for partition, leader, at in changes:
        for viewer in viewers:
            arrivals = [t for t in viewer.seen.get((partition, leader), []) if t >= at - 0.05]
            if arrivals:
                got.append(max(0.0, arrivals[0] - at) * 1000)
            else:
                missing += 1
    return got, missing


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def scenario(bench: Bench, args: argparse.Namespace, token: str) -> None:
    topic = [Viewer(f"/ws/topics/{WATCHED}/?first=0&count={PARTITIONS}")
             for _ in range(args.viewers)]
    heat = [Viewer("/ws/cluster/") for _ in range(args.heatmap_viewers)]
    everyone = topic + heat
    tasks = []
    waited = time.monotonic()
    for i, viewer in enumerate(everyone):
        tasks.append(asyncio.create_task(bench.watch(viewer)))
        if i % 10 == 9:  # daphne drops a socket not accepted within 5 s: ramp up
            await asyncio.sleep(10 / args.ramp)
    while sum(bool(v.seqs) for v in everyone) < len(everyone) and time.monotonic() - waited < 300:
        await asyncio.sleep(0.5)
    connected = sum(bool(v.seqs) for v in everyone)
    print(f"{connected} viewers connected in {time.monotonic() - waited:.1f} s")
    if args.connect_only:
        bench.stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        return
    await asyncio.sleep(3)
    for viewer in everyone:
        viewer.counting = True
    started = time.monotonic()
    await asyncio.sleep(args.steady_s)
    steady = time.monotonic() - started
    for viewer in everyone:
        viewer.counting = False
    report_steady(topic, heat, steady, connected)
    since = time.time()
    for spu in range(args.outages):
        await asyncio.to_thread(api_post, bench.stack, f"/api/spus/{spu}/offline/", token)
        await asyncio.sleep(6)
    bench.stop.set()
    await asyncio.gather(*tasks, return_exceptions=True)
    report_delays(topic, heat, leader_changes(bench.stack.var / "stack.sqlite3", since))


def load_average() -> str:
    """Figures taken on a shared machine mean little without it."""
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def report_steady(topic: list[Viewer], heat: list[Viewer], seconds: float,
                  connected: int) -> None:
    print(f"connected: {connected}/{len(topic) + len(heat)} viewers; steady window {seconds:.1f} s"
          f" with producers on all {TOPICS * PARTITIONS:,} partitions; {load_average()}")
    for name, group in (("topic page", topic), ("heatmaps", heat)):
        if group:
            msgs = statistics.mean(v.messages for v in group) / seconds
            kb = statistics.mean(v.bytes for v in group) / seconds / 1024
            print(f"  {name:<10} per viewer: {msgs:.2f} messages/s, {kb:.1f} KiB/s")
    snaps = sum(v.snapshots for v in topic + heat)
    print(f"  HTTP requests caused by viewers in steady state: {snaps / seconds:.2f}/s "
          f"({snaps} snapshot fetches after sequence gaps)")


def report_delays(topic: list[Viewer], heat: list[Viewer],
                  changes: list[tuple[int, int, float]]) -> None:
    print(f"leader changes of {WATCHED} committed during the outages: {len(changes)}; "
          f"{load_average()}")
    for name, group in (("topic page", topic), ("heatmaps", heat), ("all", topic + heat)):
        got, missing = delays(group, changes)
        if got:
            print(f"  {name:<10} delay commit -> viewer: p50 {pct(got, 0.5):.0f} ms, "
                  f"p99 {pct(got, 0.99):.0f} ms, max {max(got):.0f} ms "
                  f"({len(got)} deliveries, {missing} never seen)")
    shifted = chart_delays(heat, changes)
    if shifted:
        print(f"  heatmaps redrawn after a leader change: p50 {pct(shifted, 0.5):.0f} ms, "
              f"p99 {pct(shifted, 0.99):.0f} ms, max {max(shifted):.0f} ms")
    snaps = sum(v.snapshots for v in topic + heat)
    print(f"  snapshot fetches after gaps over the whole run: {snaps}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--heatmap-viewers", type=int, default=20)
    parser.add_argument("--steady-s", type=float, default=20)
    parser.add_argument("--outages", type=int, default=3)
    parser.add_argument("--ramp", type=float, default=50, help="new viewers per second")
    parser.add_argument("--connect-only", action="store_true",
                        help="no worker or beat: only how fast viewers connect to an idle cluster")
    args = parser.parse_args()
    engine = not args.connect_only
    with running_stack(Path(tempfile.mkdtemp(prefix="bench-live-")), before_start=BUILD,
                       worker=engine, beat=engine, worker_concurrency=2) as stack:
        bench = Bench(stack, stack.session_cookie())
        if engine:
            wait_replicated(bench)
        asyncio.run(scenario(bench, args, api_token(stack)))


if __name__ == "__main__":
    main()
