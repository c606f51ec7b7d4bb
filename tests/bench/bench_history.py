"""Benchmark of history replay (issue 21): 10,000 partitions, a day of history with an
outage every 10 minutes, synthesised with the core's entry builders into a private Redis.

Prints: log and snapshot size per day, the time to take the day's snapshots, and the
time (wall and CPU) to answer any moment through the API and the page, and to compare
two moments. Goals: a moment and a diff under 1 s each.

    .venv/bin/python tests/bench/bench_history.py [--partitions 10000] [--hours 24]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from urllib.parse import quote
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.bench._django import setup_throwaway_django  # noqa: E402
from tests.bench.bench_replication_shell import setup_redis, timed_cpu  # noqa: E402

MINUTE_MS = 60_000
SPUS, RACKS, TOPICS = 50, 5, 20


def replica_map(partitions: int) -> dict[str, list[list[int]]]:
    per_topic = partitions // TOPICS
    return {f"topic-{t:02d}": [[(t * 7 + p + i * 17) % SPUS for i in range(3)]
                               for p in range(per_topic)] for t in range(TOPICS)}


class Synth:
    """A day of entries: topics, HW checkpoints, SPU failovers and returns."""

    def __init__(self, maps: dict[str, list[list[int]]], start_ms: int) -> None:
        from cluster.core.replication.metadata import Status
        from cluster.core.replication.state import Resolution

        self.Status, self.ONLINE = Status, Resolution.ONLINE
        self.maps, self.now = maps, start_ms
        self.status = {(t, p): Status(tuple(r), r[0], tuple(r), Resolution.ONLINE, 1)
                       for t, rows in maps.items() for p, r in enumerate(rows)}
        self.hw = {k: 0 for k in self.status}
        # Partitions move at different rates (1x-8x): equal HWs would flatter the packing.
        rng = random.Random(11)
        self.speed = {k: rng.randint(1, 8) for k in self.status}

    def opening(self) -> list[dict]:
        from cluster.core.replication.metadata import _status_row

        out = [{"type": "spu-registered", "spu": s, "at": self.now} for s in range(SPUS)]
        out += [{"type": "spu-sync", "spu": s, "online": True, "at": self.now}
                for s in range(SPUS)]
        for topic, rows in self.maps.items():
            out.append({"type": "topic-replicated", "topic": topic, "at": self.now,
                        "statuses": [_status_row(self.status[(topic, p)])
                                     for p in range(len(rows))]})
        return out

    def checkpoint(self, rate: int) -> dict:
        from history.core.replay import checkpoint_entry

        changed = {}
        for key, st in self.status.items():
            self.hw[key] += rate * self.speed[key]
            hw = self.hw[key]
            changed[key] = (hw, tuple((s, hw + (s == st.leader), hw) for s in st.replicas))
        return {**checkpoint_entry(changed), "at": self.now}

    def spu_change(self, spu: int, online: bool) -> list[dict]:
        from cluster.core.replication.metadata import partition_entry

        out = [{"type": "spu", "spu": spu, "resolution": "Online" if online else "Offline",
                "from": "Offline" if online else "Online", "at": self.now}]
        for key, old in self.status.items():
            if spu not in old.replicas:
                continue
            if online:
                new = old._replace(lrs=old.replicas, leader=old.replicas[0], epoch=old.epoch + 1)
            else:
                lrs = tuple(s for s in old.lrs if s != spu)
                leader = old.leader if old.leader != spu else lrs[0]
                new = old._replace(lrs=lrs, leader=leader, epoch=old.epoch + 1)
            if new != old:
                out.append({**partition_entry(key, old, new, "bench"), "at": self.now})
                if new.leader != old.leader:
                    out.append({"type": "election", "topic": key[0], "partition": key[1],
                                "candidate": new.leader, "attempt": 1, "deadline_ms": None,
                                "at": self.now})
                self.status[key] = new
        return out


SIZES: dict[str, int] = {}


def append(entries: list[dict]) -> int:
    """Into the log as the engine appends (the same script), in batches; returns bytes."""
    for e in entries:
        kind = "hw checkpoints" if e["type"] == "hw" else "status and election entries"
        SIZES[kind] = SIZES.get(kind, 0) + len(json.dumps(e, separators=(",", ":")))
    from cluster.adapters import metadata_log
    from cluster.adapters.redis_keys import client
    from cluster.ports import bound_to_store

    size = 0
    with bound_to_store():
        for i in range(0, len(entries), 500):
            payload = [json.dumps(e, separators=(",", ":")) for e in entries[i:i + 500]]
            size += sum(map(len, payload))
            client().eval(metadata_log._APPEND_SCRIPT, 2, metadata_log.head_key(),
                          metadata_log.stream_key(), *metadata_log.append_args(payload))
    return size


def build_day(partitions: int, hours: float, hw_interval_s: int) -> tuple[int, int, float, list]:
    """Append the day, snapshotting every 10 minutes as the beat does."""
    from history.services import snapshot_take

    from cluster.models import Spu

    Spu.objects.bulk_create([Spu(id=s, rack=f"rack-{s % RACKS}", resolution="Online")
                             for s in range(SPUS)])
    start = int(time.time() * 1000) - int(hours * 3600_000)
    synth = Synth(replica_map(partitions), start)
    log_bytes = append(synth.opening())
    snap_ms, outages = 0.0, []
    minutes = int(hours * 60)
    for minute in range(1, minutes + 1):
        synth.now = start + minute * MINUTE_MS
        batch: list[dict] = []
        if minute % 10 == 0:
            spu = (minute // 10) % SPUS
            batch += synth.spu_change(spu, online=False)
            outages.append(synth.now)
        if minute % 10 == 5:
            batch += synth.spu_change(((minute - 5) // 10) % SPUS, online=True)
        if minute * 60 % hw_interval_s == 0:
            batch.append(synth.checkpoint(rate=60 * hw_interval_s))
        log_bytes += append(batch)
        if minute % 10 == 0:
            wall, _ = timed_cpu(snapshot_take)
            snap_ms += wall
    return log_bytes, minutes, snap_ms, outages


def measure(outages: list[int], samples: int) -> None:
    from django.contrib.auth.models import User
    from django.test import Client

    from cluster.roles import make_viewer
    from history.selectors import iso

    user = User.objects.create_user("bench-viewer", password="x-bench-123")
    make_viewer(user)
    client = Client()
    client.force_login(user)
    rng = random.Random(7)
    for name, path in (("API moment", "/api/history/?at={}&charts=1"),
                       ("page moment", "/history/?at={}")):
        figures = []
        for _ in range(samples):
            at = quote(iso(rng.choice(outages) + rng.randint(-300_000, 300_000)))
            figures.append(timed_cpu(lambda: _ok(client.get(path.format(at)))))
        _print(name, figures)
    diffs = []
    for _ in range(samples):
        at = rng.choice(outages)
        a, b = quote(iso(at - 1000)), quote(iso(at + 1000))
        diffs.append(timed_cpu(lambda: _ok(client.get(f"/api/history/diff/?from={a}&to={b}"))))
    _print("diff before/after an outage", diffs)


def _ok(response) -> None:
    assert response.status_code == 200, response.content[:300]


def _print(name: str, figures: list[tuple[float, float]]) -> None:
    walls = sorted(w for w, _ in figures)
    cpus = sorted(c for _, c in figures)
    print(f"{name}: median {walls[len(walls) // 2]:.0f} ms wall / {cpus[len(cpus) // 2]:.0f} ms "
          f"CPU, worst {walls[-1]:.0f} ms wall / {cpus[-1]:.0f} ms CPU ({len(figures)} moments)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--hours", type=float, default=24)
    ap.add_argument("--hw-interval-s", type=int, default=300)
    ap.add_argument("--samples", type=int, default=7)
    args = ap.parse_args(argv)
    workdir = setup_throwaway_django()
    from django.conf import settings

    settings.LIVE_UPDATES = False
    settings.ALLOWED_HOSTS = ["*"]
    proc = setup_redis(workdir)
    try:
        from history.models import Snapshot

        t, c = time.perf_counter(), time.process_time()
        log_bytes, minutes, snap_ms, outages = build_day(args.partitions, args.hours,
                                                         args.hw_interval_s)
        print(f"{args.partitions} partitions, {SPUS} SPUs, {minutes / 60:.0f} h, an outage "
              f"every 10 min ({len(outages)}), HW checkpoint every {args.hw_interval_s} s; "
              f"built in {time.perf_counter() - t:.0f} s wall / "
              f"{time.process_time() - c:.0f} s CPU; load average {os.getloadavg()[0]:.1f}")
        snaps = list(Snapshot.objects.values_list("data", flat=True))
        snap_bytes = sum(len(bytes(d)) for d in snaps)
        day = 24 * 60 / minutes
        print(f"log: {log_bytes / 1e6 * day:.1f} MB per day of JSON entries; snapshots: "
              f"{len(snaps)} = {snap_bytes / 1e6 * day:.1f} MB per day (zlib), "
              f"{snap_bytes / max(1, len(snaps)) / 1e3:.0f} kB each, "
              f"taken in {snap_ms / max(1, len(snaps)):.0f} ms each")
        print("log by kind: " + ", ".join(f"{k} {v / 1e6 * day:.1f} MB"
                                           for k, v in sorted(SIZES.items())))
        measure(outages, args.samples)
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
