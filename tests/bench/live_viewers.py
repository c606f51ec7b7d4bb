"""The viewers of tests/bench/bench_live.py, in a process of their own.

Run by bench_live.py, not by hand: opens ``--viewers`` sockets as the topic page of
``--watched`` opens them and ``--heatmap-viewers`` as the heatmaps page does, ramping at
``--ramp`` sockets per second, and follows the page protocol (cluster/live.py): on a
sequence gap a viewer fetches the group's snapshot over HTTP. When every viewer has said
hello (or ``--connect-wait-s`` has passed) it prints one JSON line (connected, attempted,
seconds); it then listens until a line arrives on stdin and writes what each viewer saw
to ``--out``. Its own CPU is the client's: the bench reads it apart from the server's.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass, field

import websockets


@dataclass
class Viewer:
    path: str
    started: float = 0.0
    hello: float | None = None
    error: str | None = None
    # (arrival, bytes) of every message after the hello
    messages: list[tuple[float, int]] = field(default_factory=list)
    snapshots: int = 0
    # (partition of the watched topic, leader, arrival) whenever the leader a viewer
    # holds for a partition changes: a commit's delivery is the first such arrival
    leaders: list[tuple[int, int, float]] = field(default_factory=list)
    charts: list[float] = field(default_factory=list)


class Client:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.stop = asyncio.Event()
        self.headers = {"Cookie": f"sessionid={args.cookie}", "Origin": args.url}

    def snapshot(self, group: str) -> dict:
        request = urllib.request.Request(
            f"{self.args.url}/api/live/snapshot/?group={urllib.parse.quote(group)}",
            headers={"Cookie": f"sessionid={self.args.cookie}"})
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())

    async def watch(self, viewer: Viewer) -> None:
        url = self.args.url.replace("http", "ws") + viewer.path
        seqs: dict[str, int] = {}
        held: dict[int, int] = {}
        viewer.started = time.time()
        try:
            async with websockets.connect(url, additional_headers=self.headers, max_size=None,
                                          open_timeout=300) as socket:
                while not self.stop.is_set():
                    try:
                        raw = await asyncio.wait_for(socket.recv(), 0.5)
                    except asyncio.TimeoutError:
                        continue
                    await self.receive(viewer, seqs, held, raw, time.time())
        except Exception as exc:  # a viewer's failure is a figure, not the bench's end
            if viewer.hello is None or not self.stop.is_set():
                viewer.error = f"{type(exc).__name__}: {exc}"[:200]

    async def receive(self, viewer: Viewer, seqs: dict[str, int], held: dict[int, int],
                      raw: str, at: float) -> None:
        message = json.loads(raw)
        if message["type"] == "live.hello":
            viewer.hello = at
            seqs.update(message["groups"])
            return
        if message["type"] == "live.seqs":
            return  # the beacon: no data (a page resyncs only a group still behind it)
        viewer.messages.append((at, len(raw)))
        group, last = message["group"], seqs.get(message["group"])
        self.note(viewer, held, message, at)
        seqs[group] = max(last or 0, message["seq"])
        if last is not None and message["seq"] > last + 1:
            viewer.snapshots += 1
            snap = await asyncio.to_thread(self.snapshot, group)
            self.note(viewer, held, snap, time.time())
            seqs[group] = max(seqs[group], snap["seq"])

    def note(self, viewer: Viewer, held: dict[int, int], data: dict, at: float) -> None:
        if data.get("charts"):
            viewer.charts.append(at)
        for row in data.get("partitions", []):
            leader = row["leader"]
            if row["topic"] == self.args.watched and leader is not None \
                    and held.get(row["partition"]) != leader:
                held[row["partition"]] = leader
                viewer.leaders.append((row["partition"], leader, at))


async def run(args: argparse.Namespace) -> list[Viewer]:
    client = Client(args)
    loop = asyncio.get_running_loop()
    # The bench says when to stop on stdin: a thread waits for its line.
    threading.Thread(target=lambda: (sys.stdin.readline(),
                                     loop.call_soon_threadsafe(client.stop.set)),
                     daemon=True).start()
    viewers = [Viewer(f"/ws/topics/{args.watched}/?first=0&count={args.count}")
               for _ in range(args.viewers)] + \
              [Viewer("/ws/cluster/") for _ in range(args.heatmap_viewers)]
    started = time.monotonic()
    tasks = []
    for i, viewer in enumerate(viewers):
        tasks.append(asyncio.create_task(client.watch(viewer)))
        if i % 10 == 9:
            await asyncio.sleep(10 / args.ramp)
    while time.monotonic() - started < args.connect_wait_s and not client.stop.is_set() and \
            sum(v.hello is not None or v.error is not None for v in viewers) < len(viewers):
        await asyncio.sleep(0.2)
    print(json.dumps({"connected": sum(v.hello is not None for v in viewers),
                      "attempted": len(viewers),
                      "seconds": round(time.monotonic() - started, 2)}), flush=True)
    await client.stop.wait()
    await asyncio.gather(*tasks, return_exceptions=True)
    return viewers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--cookie", required=True)
    parser.add_argument("--watched", required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--viewers", type=int, default=100)
    parser.add_argument("--heatmap-viewers", type=int, default=20)
    parser.add_argument("--ramp", type=float, default=50)
    parser.add_argument("--connect-wait-s", type=float, default=300)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    viewers = asyncio.run(run(args))
    with open(args.out, "w") as out:
        json.dump([asdict(v) for v in viewers], out)


if __name__ == "__main__":
    main()
