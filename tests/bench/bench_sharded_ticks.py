"""Benchmark: SPU loops spread over Celery worker processes (REPLICATION_SHARDS).

For each cluster size (partitions at replication 3 on 50 SPUs, the simulated
producers appending one record per partition per second, acks=1) and for 1, 2
and 4 worker processes (`celery -A webapp worker --concurrency 1` each, with
`celery -A webapp beat` sending the tick every second, as `make run` does), it
measures over a fixed window the steps per second every shard kept, how the
shard tasks split over the workers, and the CPU each process and the machine
used. Real processes, a private Redis (append-only, fsync always, as `make
run`'s) and a throwaway SQLite database. Prints figures; asserts nothing.

    .venv/bin/python tests/bench/bench_sharded_ticks.py [--sizes 2500,5000,10000,20000]
        [--workers 1,2,4] [--shards 4] [--window 20] [--acks-all 5] [--hot-redis N]
        [--max-per-worker P] [--min-per-worker P] [--outage] [--plan]

Each round also prints the CPU one step costs per partition and how many cores (and
two-core machines) 1 step/s at 100,000 partitions needs at that cost. ``--acks-all N``
times N produces with acks=all to an idle one-partition topic (``small``, replication 3)
during the window, as a page or the API would send them, and prints how much of each
write its append took (the produce's unit of work, its wait for the shard's lease included).

``--outage`` takes SPU 0 offline a third into each window and back online at two thirds
(the services an operator's command calls): the round then says how many coordinator
ticks ran whole (every set in one process), how many adopted the change on the SPU's sets
alone (``alone_ticks``), and the CPU of the longest.

``--plan`` plans the drain of the last SPU and applies it once the first shard tick is done
(before the warm-up), so its moves run through every window: the round then counts the
coordinator ticks that ran the plan's step on its own sets (``plan_step_ticks``) beside
the whole ones.

``--hot-redis N`` puts the hot state on N private Redis servers of its own
(``HOT_STATE_REDIS_URLS``: shard s on server s mod N, the cluster lease, meta and log on
the first; cluster/adapters/hot_servers.py), the broker staying on the first private
Redis; each round then prints every Redis server's CPU. Without it the hot state and the
broker share one Redis, as by default.

``--max-per-worker`` / ``--min-per-worker`` skip the rounds whose partitions per worker
lie outside those bounds, so that a ladder of sizes and worker counts spends its time
near where each count stops holding 1 step/s.

Each round is bounded (start, warm-up, window, stop): about 35 s, plus the
first whole tick after each growth of the cluster.

It ends with the scale-out summary issue 33 asks for, per worker count: the largest size
that held 1 step/s (0.9 at least, steps counted whole) and the Redis servers' CPU there,
the most partition-steps per second any size reached (what the workers carried, held or
not: on a machine too small to hold any size it still compares worker counts) and each
count's ratio to the first. ``--json`` adds one JSON line of every round and that summary.
Doubling the hot state's servers with the workers is one run per pairing
(``--workers 2 --hot-redis 1``, then ``--workers 4 --hot-redis 2``): the servers are
placed when the store is built.
"""
from __future__ import annotations

import argparse
import ast
import json
import math
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
SPUS = 50
LINE = re.compile(r"^\[(?P<at>[\d-]+ [\d:,]+): \w+/[^\]]+\] Task cluster\.tasks\."
                  r"(?P<task>replication_shard_tick|replication_tick)\[[^\]]+\] succeeded in "
                  r"(?P<s>[\d.e-]+)s: (?P<result>.*)$")
# Any other task a worker ran (beat's periodic ones): the time it held the worker.
OTHER = re.compile(r"^\[(?P<at>[\d-]+ [\d:,]+): \w+/[^\]]+\] Task (?P<task>[\w.]+)\[[^\]]+\] "
                   r"succeeded in (?P<s>[\d.e-]+)s: ")


@dataclass
class Round:
    workers: int
    window_s: float
    steps: dict[int, int] = field(default_factory=dict)          # shard -> ticks in window
    per_worker: dict[str, list[float]] = field(default_factory=dict)  # name -> shard tick ms
    worker_cpu: dict[str, list[float]] = field(default_factory=dict)  # name -> shard tick CPU ms
    coordinator: dict[str, int] = field(default_factory=dict)    # name -> coordinator ticks
    coordinator_cpu: list[float] = field(default_factory=list)
    whole: int = 0                                                # whole (unsharded) ticks
    alone: int = 0                  # ticks that adopted SPUs' changes on their sets alone
    plan_steps: int = 0             # ticks that ran a tick step (a plan's) on its sets alone
    cpu: dict[str, float] = field(default_factory=dict)           # process -> CPU s in window
    machine_busy: float = 0.0                                     # % of all cores
    acks_all_ms: list[float] = field(default_factory=list)        # idle topic's acks=all
    append_ms: list[float] = field(default_factory=list)          # of which the append
    lease_wait_ms: list[float] = field(default_factory=list)      # of which lease waits
    # task -> [runs, seconds] of the other tasks the workers finished in the window
    other: dict[str, list[float]] = field(default_factory=dict)
    # Redis server -> its longest command in the window and how many took over 50 ms
    slow: dict[str, dict[str, object]] = field(default_factory=dict)

    def rate(self, shards: int) -> float:
        return min((self.steps.get(s, 0) + self.whole) / self.window_s for s in range(shards))

    def cpu_per_tick(self, shards: int) -> tuple[float, float]:
        """CPU ms one tick needs: the coordinator's, and the shard tasks' summed over shards."""
        ticks = [ms for cpu in self.worker_cpu.values() for ms in cpu]
        shard_ms = sum(ticks) / len(ticks) * shards if ticks else 0.0
        coord = self.coordinator_cpu
        return (sum(coord) / len(coord) if coord else 0.0), shard_ms


def setup(workdir: Path, shards: int, postgres: bool = False, hot_urls: list[str] | None = None
          ) -> tuple[subprocess.Popen, str]:
    sys.path.insert(0, str(ROOT / "tests" / "bench"))
    from _django import setup_bench_store

    # This process's produces take the leases the workers' shards take, as a web server's do.
    proc = setup_bench_store(workdir, postgres, "shards", workdir / "bench.sqlite3",
                             REPLICATION_SHARDS=str(shards),
                             HOT_STATE_REDIS_URLS=",".join(hot_urls or []))
    from cluster.services import spu_connect, spu_register

    for i in range(SPUS):
        spu_register(spu_id=i)
        spu_connect(spu_id=i)
    return proc, os.environ["REDIS_URL"]


def drop_database(postgres: bool) -> None:
    if postgres:
        from django.db import connection

        name = connection.settings_dict["NAME"]
        connection.close()
        with connection._nodb_cursor() as cursor:  # workers' sessions may linger a moment
            cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                           "WHERE datname = %s AND pid <> pg_backend_pid()", [name])
        connection.creation.destroy_test_db(name, verbosity=0)


TOPIC_MAX = 100_000  # the most partitions one topic may have (topic_create refuses more)


def new_topics(partitions: int, have: int) -> list[tuple[str, int]]:
    """The topics (name, partitions) that grow ``have`` partitions to ``partitions``, each
    of at most TOPIC_MAX."""
    out: list[tuple[str, int]] = []
    while have < partitions:
        count = min(TOPIC_MAX, partitions - have)
        out.append((f"bench{partitions}" + (f"-{len(out)}" if out else ""), count))
        have += count
    return out


def grow_to(partitions: int, have: int) -> None:
    """Add topics of the missing partitions; each topic's producer writes one record per
    partition per second."""
    from cluster.services import topic_create
    from cluster.services.records import topic_set_producer_rate

    for name, count in new_topics(partitions, have):
        topic_create(name=name, partitions=count, replication=3, min_lrs=2)
        topic_set_producer_rate(name=name, rate=count)


def skipped(size: int, workers: int, most: int, least: int) -> bool:
    """A round outside the partitions-per-worker bounds (``most`` 0: no upper bound)."""
    per_worker = size / workers
    return bool(most and per_worker > most) or per_worker < least


def env(shards: int) -> dict[str, str]:
    return {**os.environ, "REPLICATION_SHARDS": str(shards), "PYTHONUNBUFFERED": "1",
            "REPLICATION_SIMULATED_PRODUCERS": "1", "WORKER_CONCURRENCY": "1"}


def start(workers: int, shards: int, logs: Path) -> dict[str, subprocess.Popen]:
    procs: dict[str, subprocess.Popen] = {}
    base = [sys.executable, "-m", "celery", "-A", "webapp"]
    commands = {f"w{i}": base + ["worker", "--concurrency", "1", "-n", f"w{i}@%h", "-l", "info",
                                 "--without-gossip", "--without-mingle"]
                for i in range(workers)}
    commands["beat"] = base + ["beat", "-l", "info", "-s", str(logs / "beat-schedule")]
    for name, command in commands.items():
        out = (logs / f"{name}.log").open("w")
        procs[name] = subprocess.Popen(command, cwd=ROOT, env=env(shards), stdout=out,
                                       stderr=subprocess.STDOUT, start_new_session=True)
    return procs


def stop(procs: dict[str, subprocess.Popen], wait_s: float = 15) -> None:
    """Stop each process group (TERM, then KILL if it does not end within ``wait_s``)."""
    for proc in procs.values():
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
    for proc in procs.values():
        try:
            proc.wait(wait_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def parse(logs: Path, names: list[str], t0: datetime, t1: datetime, out: Round) -> None:
    for name in names:
        for line in (logs / f"{name}.log").read_text().splitlines():
            m = LINE.match(line)
            if not m:
                other = OTHER.match(line)
                if other and t0 <= datetime.strptime(other["at"], "%Y-%m-%d %H:%M:%S,%f") <= t1:
                    runs = out.other.setdefault(other["task"].rsplit(".", 1)[-1], [0, 0.0])
                    runs[0] += 1
                    runs[1] += float(other["s"])
                continue
            at = datetime.strptime(m["at"], "%Y-%m-%d %H:%M:%S,%f")
            if not t0 <= at <= t1 or m["result"] == "None":
                continue
            result = ast.literal_eval(m["result"])
            if m["task"] == "replication_shard_tick":
                out.steps[result["shard"]] = out.steps.get(result["shard"], 0) + 1
                out.per_worker.setdefault(name, []).append(result["ms"])
                out.worker_cpu.setdefault(name, []).append(result["cpu_ms"])
            else:
                out.coordinator[name] = out.coordinator.get(name, 0) + 1
                # (A worker older than the "ran" key ran whole whenever it ran no shard.)
                ran = result.get("ran", "whole" if result.get("shards") == 0 else "quiet")
                out.whole += ran == "whole"
                out.alone += ran == "alone"
                out.plan_steps += result.get("step_sets", 0) > 0
                out.coordinator_cpu.append(result.get("cpu_ms", 0))


def first_tick_done(logs: Path, names: list[str]) -> bool:
    """A shard tick finished with a report (the first whole tick after a growth is over)."""
    return any(m["task"] == "replication_shard_tick" and m["result"] != "None"
               for n in names for m in map(LINE.match, (logs / f"{n}.log").read_text()
                                           .splitlines()) if m)


def cpu_seconds(procs: dict[str, psutil.Process]) -> dict[str, float]:
    out = {}
    for name, p in procs.items():
        try:
            family = [p, *p.children(recursive=True)]
            out[name] = sum(sum(q.cpu_times()[:2]) for q in family)
        except psutil.NoSuchProcess:
            out[name] = 0.0
    return out


def acks_all_latencies(n: int, until: float
                       ) -> tuple[list[float], list[float], list[float]]:
    """Produce with acks=all to the idle topic, one write at a time, until ``until``: each
    write's whole time (as ``records_produce_and_wait``, what every shell calls) and the
    part of it its append took (the unit of work, with its wait for the shard's lease), and
    the time it waited for leases."""
    from cluster.adapters import lease
    from cluster.services import records

    out, appends, waits = [], [], []
    acquire = lease.acquire

    def timed_acquire(*args, **kwargs):  # the time this process waits for a lease
        t = time.perf_counter()
        try:
            return acquire(*args, **kwargs)
        finally:
            waits[-1] += (time.perf_counter() - t) * 1000

    lease.acquire = timed_acquire
    try:
        for _ in range(n):
            if time.monotonic() > until:
                break
            t = time.perf_counter()
            waits.append(0.0)
            records.wait_replicated("small")
            outcome = records.records_produce(topic="small", acks="all", count=1)
            appends.append((time.perf_counter() - t) * 1000)
            outcome = records.produce_and_wait(outcome, timeout_s=30)
            out.append((time.perf_counter() - t) * 1000 if outcome.ok else float("inf"))
    finally:
        lease.acquire = acquire
    return out, appends, waits


def start_hot_redis(workdir: Path, n: int) -> list[tuple[subprocess.Popen, str]]:
    """``n`` private Redis servers for the hot state (none: it shares the broker's)."""
    from webapp.redis_server import start_private_redis

    return [start_private_redis(workdir / f"hot-redis-{i}") for i in range(n)]


def outage_in(window_s: float) -> list[threading.Timer]:
    """SPU 0 taken offline a third into the window and back online at two thirds, through
    the services an operator's command calls (the engine adopts each at its next tick)."""
    def at(fraction: float, call: Callable[[], object]) -> threading.Timer:
        def run() -> None:
            from django import db

            try:
                call()
            finally:
                db.connections.close_all()  # this thread's own connection
        timer = threading.Timer(window_s * fraction, run)
        timer.start()
        return timer

    from cluster.services.outages import spu_offline, spu_online

    return [at(1 / 3, lambda: spu_offline(spu_id=0, by="bench")),
            at(2 / 3, lambda: spu_online(spu_id=0, by="bench"))]


def drain_applied() -> None:
    """The drain of the last SPU planned and applied (once: a plan already running goes on)."""
    from django import db

    from planner.drain import plan_drain
    from planner.execution import plan_apply
    from planner.running import executing

    if executing():
        return
    started = time.monotonic()
    plan = plan_drain(spu_id=SPUS - 1, by="bench")
    plan_apply(plan_id=plan.pk, by="bench")
    db.connections.close_all()
    print(f"{'':>20}the drain of SPU {SPUS - 1} applied: {len(plan.moves):,} moves, planned in "
          f"{time.monotonic() - started:.1f} s", flush=True)


def measure(workers: int, shards: int, logs: Path, redis_pids: dict[str, int], warmup_s: float,
            window_s: float, acks_all: int = 0, outage: bool = False,
            plan: bool = False, redis_urls: dict[str, str] | None = None) -> Round:
    procs = start(workers, shards, logs)
    names = [n for n in procs if n != "beat"]
    try:
        deadline = time.monotonic() + 240
        started = time.monotonic()
        while not first_tick_done(logs, names):
            if time.monotonic() > deadline:
                raise RuntimeError(f"no shard tick within 240 s; see {logs}")
            ended = [n for n, p in procs.items() if p.poll() is not None]
            if ended:  # a worker or beat that failed to start: say so now, not in 240 s
                tail = (logs / f"{ended[0]}.log").read_text().splitlines()[-15:]
                raise RuntimeError(f"{', '.join(ended)} ended before the first shard tick; "
                                   f"{ended[0]}.log ends:\n" + "\n".join(tail))
            time.sleep(0.5)
        print(f"{'':>20}{workers} worker(s): first shard tick done "
              f"{time.monotonic() - started:.1f} s after the start", flush=True)
        if plan:
            drain_applied()
        time.sleep(warmup_s)
        watched = {n: psutil.Process(p.pid) for n, p in procs.items()}
        watched.update((name, psutil.Process(pid)) for name, pid in redis_pids.items())
        import redis as redis_client
        from _slowlog import close_window, open_window  # (tests/bench: on the path by setup)

        clients = {name: redis_client.Redis.from_url(url)
                   for name, url in (redis_urls or {}).items()}
        open_window(clients)
        before, t0 = cpu_seconds(watched), datetime.now()
        psutil.cpu_percent()
        end = time.monotonic() + window_s
        timers = outage_in(window_s) if outage else []
        acks, appends, waits = acks_all_latencies(acks_all, end) if acks_all else ([], [], [])
        time.sleep(max(0.0, end - time.monotonic()))
        for timer in timers:
            timer.join()
        busy, t1, after = psutil.cpu_percent(), datetime.now(), cpu_seconds(watched)
        slow = close_window(clients)
    finally:
        stop(procs)
    out = Round(workers, window_s, machine_busy=busy, acks_all_ms=acks, append_ms=appends,
                lease_wait_ms=waits, slow=slow)
    out.cpu = {n: after[n] - before[n] for n in watched}
    parse(logs, names, t0, t1, out)
    return out


def redis_cores(r: Round) -> dict[str, float]:
    """Each Redis server's CPU over the window, in cores."""
    return {n: s / r.window_s for n, s in sorted(r.cpu.items()) if n.startswith("redis")}


def redis_cpu(r: Round) -> str:
    """Each Redis server's CPU over the window, in cores, and their sum."""
    servers = redis_cores(r)
    return (", ".join(f"{n} {c:.2f}" for n, c in servers.items()) +
            f"; all {sum(servers.values()):.2f}")


def round_json(size: int, shards: int, r: Round) -> dict[str, object]:
    """One round's figures, as ``--json`` prints them."""
    coord_ms, shard_ms = r.cpu_per_tick(shards)
    rate = r.rate(shards)
    return {"partitions": size, "workers": r.workers, "steps_per_s": round(rate, 3),
            "holds_1_step_per_s": rate >= 0.9,
            "partition_steps_per_s": round(rate * size),
            "redis_cpu_cores": {n: round(c, 3) for n, c in redis_cores(r).items()},
            # Each server's longest command in the window (ms) and its commands over 50 ms.
            "redis_max_command_ms": {n: s["max_command_ms"] for n, s in sorted(r.slow.items())},
            "redis_commands_over_50_ms": {n: s["over_50_ms"] for n, s in sorted(r.slow.items())},
            "redis_max_command": {n: s["command"] for n, s in sorted(r.slow.items())},
            "process_cpu_cores": {n: round(c / r.window_s, 3) for n, c in sorted(r.cpu.items())
                                  if not n.startswith("redis")},
            "machine_busy_pct": round(r.machine_busy, 1),
            # Seconds the workers spent in beat's other tasks (the healing check...).
            "other_tasks_s": {t: round(s, 2) for t, (_, s) in sorted(r.other.items())},
            "cpu_per_partition_step_us": round((coord_ms + shard_ms) * 1000 / size, 1),
            # Ticks the coordinator ran whole (every lease, every set in one process: an
            # SPU changing status, with --outage) and the CPU of the longest coordinator tick.
            "whole_ticks": r.whole,
            # ... and the ticks that adopted it on the changing SPUs' sets alone, under
            # every lease (engine/controllers.adopt_alone).
            "alone_ticks": r.alone,
            # ... and those that ran a running plan's step on its own sets (--plan).
            "plan_step_ticks": r.plan_steps,
            "longest_coordinator_cpu_ms": max(r.coordinator_cpu, default=0)}


def scale_out(rounds: list[dict], counts: list[int]) -> dict[str, dict[str, object]]:
    """Per worker count: the largest size held at 1 step/s and the Redis servers' CPU
    there (None: no size held), the most partition-steps/s of any size and its ratio to
    the first count's (doubling workers should nearly double it)."""
    out: dict[str, dict[str, object]] = {}
    first = None
    for w in counts:
        mine = [r for r in rounds if r["workers"] == w]
        held = [r for r in mine if r["holds_1_step_per_s"]]
        top = max(held, key=lambda r: r["partitions"]) if held else None
        most = max((r["partition_steps_per_s"] for r in mine), default=0)
        first = most if first is None else first
        tried = max((r["partitions"] for r in mine), default=0)
        out[str(w)] = {"largest_held": top["partitions"] if top else 0,
                       # Held at the largest size tried: the limit lies above the sizes.
                       "held_every_size": bool(top) and top["partitions"] == tried,
                       "redis_cpu_cores_at_largest": top["redis_cpu_cores"] if top else None,
                       "most_partition_steps_per_s": most,
                       "vs_first_count": round(most / first, 2) if first else None}
    return out


def print_scale_out(summary: dict[str, dict[str, object]]) -> None:
    print("scale-out, per worker count: largest size held at 1 step/s (Redis CPU there, "
          "cores); most partition-steps/s of any size (x the first count)")
    for w, s in summary.items():
        redis = s["redis_cpu_cores_at_largest"]
        cores = (", ".join(f"{n} {c:.2f}" for n, c in redis.items())  # type: ignore[union-attr]
                 if redis else "n/a")
        floor = " or more (held the largest size tried)" if s["held_every_size"] else ""
        print(f"  {w:>3} worker(s): {s['largest_held']:>9,} partitions{floor} (Redis {cores}); "
              f"{s['most_partition_steps_per_s']:>9,} partition-steps/s (x{s['vs_first_count']})")


def report(size: int, shards: int, r: Round) -> None:
    rate = r.rate(shards)
    split = ", ".join(f"{n}: {len(ms)} ticks, wall {sum(ms) / r.window_s / 10:.0f}% / CPU "
                      f"{sum(r.worker_cpu[n]) / r.window_s / 10:.0f}% of a core"
                      for n, ms in sorted(r.per_worker.items()))
    cpu = ", ".join(f"{n} {s / r.window_s:.2f}" for n, s in sorted(r.cpu.items()))
    coord_ms, shard_ms = r.cpu_per_tick(shards)
    print(f"{size:>7,} partitions  {r.workers} worker(s): {rate:4.2f} steps/s per shard "
          f"({'keeps' if rate >= 0.9 else 'MISSES'} 1/s); shard ticks {split}; "
          f"coordinator ticks {dict(sorted(r.coordinator.items()))}, whole ticks {r.whole}, "
          f"alone {r.alone}, a plan's step alone {r.plan_steps}")
    print(f"{'':>20}one tick's CPU: coordinator {coord_ms:.0f} ms + {shards} shard tasks "
          f"{shard_ms:.0f} ms; cores used: {cpu}; machine {r.machine_busy:.0f}% of "
          f"{psutil.cpu_count()} cores")
    print(f"{'':>20}Redis servers' CPU (cores): {redis_cpu(r)}")
    if r.slow:
        print(f"{'':>20}Redis servers' longest command: " + ", ".join(
            f"{n} {s['max_command_ms']} ms ({s['over_50_ms']} over 50 ms; {s['command'][:40]})"
            for n, s in sorted(r.slow.items())))
    if r.other:
        print(f"{'':>20}other tasks on the workers: " + ", ".join(
            f"{task} {int(runs)} run(s) {seconds:.1f} s" for task, (runs, seconds)
            in sorted(r.other.items())))
    per_partition_us = (coord_ms + shard_ms) * 1000 / size
    cores = per_partition_us * 100_000 / 1e6
    print(f"{'':>20}CPU per partition per step {per_partition_us:.0f} us -> 100,000 partitions "
          f"at 1 step/s need {cores:.1f} cores ({math.ceil(cores / 2)} two-core worker "
          f"machines, Redis and the database apart)")
    if r.acks_all_ms:
        ms = sorted(r.acks_all_ms)
        print(f"{'':>20}acks=all on an idle 1-partition topic: median "
              f"{statistics.median(ms):.0f} ms, max {ms[-1]:.0f} ms ({len(ms)} writes); "
              f"the append alone (its unit of work, lease wait included): median "
              f"{statistics.median(r.append_ms):.0f} ms, max {max(r.append_ms):.0f} ms; "
              f"waiting for leases: median {statistics.median(r.lease_wait_ms):.0f} ms, "
              f"max {max(r.lease_wait_ms):.0f} ms")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="2500,5000,10000,20000")
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--warmup", type=float, default=4.0)
    # Steps are counted whole: over 8 s one step more or less is 12% and read as a miss.
    parser.add_argument("--window", type=float, default=20.0)
    parser.add_argument("--acks-all", type=int, default=0)
    parser.add_argument("--hot-redis", type=int, default=0,
                        help="the hot state on this many private Redis servers of its own "
                             "(HOT_STATE_REDIS_URLS); 0: on the broker's, as by default")
    parser.add_argument("--postgres", action="store_true",
                        help="a throwaway PostgreSQL database instead of SQLite")
    parser.add_argument("--max-per-worker", type=int, default=0,
                        help="skip a round whose partitions per worker exceed this (0: none "
                             "skipped): a worker count far too small for a size only spends "
                             "the run's time")
    parser.add_argument("--min-per-worker", type=int, default=0,
                        help="skip a round whose partitions per worker are under this")
    parser.add_argument("--json", action="store_true",
                        help="end with one JSON line: every round and the scale-out summary")
    parser.add_argument("--plan", action="store_true",
                        help="apply the drain of the last SPU before the warm-up: its moves "
                             "run through the windows")
    parser.add_argument("--outage", action="store_true",
                        help="in each window SPU 0 goes offline at a third and back online at "
                             "two thirds: what an outage rehearsal costs the steps")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    counts = [int(w) for w in args.workers.split(",")]
    workdir = Path(tempfile.mkdtemp(prefix="bench-shards-"))
    hot = start_hot_redis(workdir, args.hot_redis)
    redis, broker_url = setup(workdir, args.shards, args.postgres, [url for _, url in hot])
    # The broker's Redis (with no --hot-redis, the hot state's too), then the hot state's.
    redis_pids = {"redis": redis.pid, **{f"redis-hot{i}": proc.pid
                                         for i, (proc, _) in enumerate(hot)}}
    redis_urls = {"redis": broker_url, **{f"redis-hot{i}": url
                                          for i, (_, url) in enumerate(hot)}}
    if args.acks_all:
        from cluster.services import topic_create

        topic_create(name="small", partitions=1, replication=3, min_lrs=2)
    print(f"load average before: {os.getloadavg()}  ({psutil.cpu_count()} cores, shared)")
    print(f"{SPUS} SPUs, replication 3, one record per partition per second, "
          f"REPLICATION_SHARDS={args.shards}, hot state on "
          f"{f'{args.hot_redis} Redis server(s) of its own' if hot else 'the broker Redis'}")
    best: dict[int, int] = {}
    best_redis: dict[int, str] = {}
    rounds: list[dict] = []
    have = 0
    try:
        for size in sizes:
            t = time.monotonic()
            grow_to(size, have)
            print(f"grew to {size:,} partitions in {time.monotonic() - t:.1f} s", flush=True)
            have = size
            for workers in counts:
                if skipped(size, workers, args.max_per_worker, args.min_per_worker):
                    print(f"{size:>7,} partitions  {workers} worker(s): skipped "
                          f"({size / workers:,.0f} partitions a worker)", flush=True)
                    continue
                logs = workdir / f"{size}-{workers}"
                logs.mkdir()
                r = measure(workers, args.shards, logs, redis_pids, args.warmup, args.window,
                            args.acks_all, args.outage, args.plan, redis_urls)
                report(size, args.shards, r)
                rounds.append(round_json(size, args.shards, r))
                if r.rate(args.shards) >= 0.9:
                    best[workers] = size
                    best_redis[workers] = redis_cpu(r)
            print(f"{'':>20}load average: {os.getloadavg()}")
    finally:
        drop_database(args.postgres)
        for proc in [redis, *(p for p, _ in hot)]:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(10)
    print("largest cluster keeping 1 step/s per shard: " +
          ", ".join(f"{w} worker(s): {best.get(w, 0):,} partitions" for w in counts))
    for w in counts:
        print(f"  {w} worker(s), Redis CPU at that size: {best_redis.get(w, 'n/a')}")
    summary = scale_out(rounds, counts)
    print_scale_out(summary)
    print(f"load average after: {os.getloadavg()}")
    if args.json:
        print(json.dumps({"shards": args.shards, "hot_redis": args.hot_redis,
                          "cores": psutil.cpu_count(), "rounds": rounds,
                          "scale_out": summary}))


if __name__ == "__main__":
    main()
