"""Benchmark: self-healing after an SPU is lost, 10,000 partitions.

50 SPUs in 5 racks hold 10,000 partitions (replication 3, min LRS 2, a
simulated producer writing 1,000 records/s). One SPU goes offline; the anomaly
detector runs every HEALING_CHECK_INTERVAL_S (default 5 s) of cluster time and,
past the heal threshold, plans the SPU's drain and applies it with
self-healing's default throttles (5 moves per SPU, 50 in all, 10 MiB/s,
5,000 moves per hour). Replication ticks run here, one per second of cluster
time (as the beat's REPLICATION_TICK_S). Prints, from the threshold to every
partition back at its factor on SPUs that are up: cluster seconds, wall and CPU
seconds, ticks/s, and the detection run's cost. Asserts nothing about time;
a throwaway SQLite database and a private Redis. Run:
    .venv/bin/python tests/bench/bench_healing.py [--spus 50] [--partitions 10000]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup_throwaway_django  # noqa: E402
from bench_plan_apply import tick as wall_tick  # noqa: E402
from bench_replication_shell import build, timed  # noqa: E402

LOST = 7


CPU_MS: list[float] = []


def tick(now: int) -> float:
    """One replication tick (the beat's); its wall ms returned, its CPU ms kept in CPU_MS."""
    cpu = time.process_time()
    ms = wall_tick(now)
    CPU_MS.append((time.process_time() - cpu) * 1000)
    return ms


def whole() -> bool:
    """Every partition has its factor of replicas, none on the lost SPU."""
    from cluster.models import Partition

    return all(len(r) == 3 and LOST not in r
               for r in Partition.objects.values_list("replicas", flat=True))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--spus", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--max-ticks", type=int, default=3_000)
    args = ap.parse_args(argv)
    workdir = setup_throwaway_django()
    from django.conf import settings

    settings.REPLICATION_SIMULATED_PRODUCERS = True
    settings.LIVE_UPDATES = False
    from webapp.redis_server import start_private_redis

    proc, settings.REDIS_URL = start_private_redis(workdir / "redis")
    try:
        bench(args, settings.HEALING_CHECK_INTERVAL_S)
    finally:
        from cluster.adapters import hot_state

        hot_state.client().flushdb()
        proc.terminate()


def bench(args: argparse.Namespace, every_s: float) -> None:
    from cluster.services.outages import spu_offline
    from healing.models import Anomaly
    from healing.services import current_settings, healing_check, healing_enable, healing_set

    build(args.spus, args.partitions, racks=5, rate=1000)
    healing_enable(by="bench")
    for name, value in (("spu_down_alert_after_s", "5"), ("spu_down_heal_after_s", "10")):
        healing_set(name=name, value=value, by="bench")
    defaults = current_settings()
    now = int(time.time() * 1000)
    idle = [tick(now := now + 1000) for _ in range(6)][1:]
    idle_cpu = CPU_MS[1:]
    spu_offline(spu_id=LOST)
    lost_at, threshold = now, now + int(defaults.spu_down_heal_after_s * 1000)
    checks: list[float] = []
    ticks: list[float] = []
    wall = cpu = 0.0
    planned_at = None
    while len(ticks) < args.max_ticks:
        now += 1000
        if now >= threshold and not wall:
            wall, cpu = time.perf_counter(), time.process_time()
        if (now - lost_at) % int(every_s * 1000) < 1000:
            ms, _ = timed(lambda: healing_check(now_ms=now))
            checks.append(ms)
            if planned_at is None and Anomaly.objects.filter(plan__isnull=False).exists():
                planned_at = now
        ticks.append(tick(now))
        if len(ticks) % 25 == 0:
            print(f"  ... {len(ticks)} ticks, {time.perf_counter() - (wall or time.perf_counter()):.0f}"
                  " s wall since the threshold", file=sys.stderr, flush=True)
        if planned_at is not None and whole():
            break
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    first = (threshold - lost_at) // 1000
    after, after_cpu = ticks[first:], CPU_MS[len(CPU_MS) - len(ticks) + first:]
    a = Anomaly.objects.filter(plan__isnull=False).select_related("plan").first()
    moves = len(a.plan.moves) if a else 0
    print(f"{args.spus} SPUs in 5 racks, {args.partitions} partitions, replication 3, "
          f"producer 1,000 records/s; SPU {LOST} lost; heal threshold "
          f"{defaults.spu_down_heal_after_s:g} s, checks every {every_s:g} s; throttles "
          f"{defaults.max_moves_per_spu}/SPU, {defaults.max_moves} in all, "
          f"{defaults.throttle_bytes_per_s:,} B/s, {defaults.moves_per_hour}/hour")
    print(f"healed: {whole()} ({moves} moves in plan {a.plan_id if a else None}, "
          f"anomaly {a.state if a else None})")
    print(f"threshold -> full replication factor: {(now - threshold) / 1000:.0f} s of cluster "
          f"time, {wall:.1f} s wall, {cpu:.1f} s CPU of this process")
    print(f"tick before the loss: median {statistics.median(idle):.0f} ms wall, "
          f"{statistics.median(idle_cpu):.0f} ms CPU -> {1000 / statistics.median(idle):.2f} "
          f"ticks/s wall, {1000 / statistics.median(idle_cpu):.2f} by CPU")
    print(f"ticks while it runs: {len(after)} in {wall:.1f} s wall (detection runs included) -> "
          f"{len(after) / wall:.2f} ticks/s; median tick {statistics.median(after):.0f} ms wall "
          f"(max {max(after):.0f}), {statistics.median(after_cpu):.0f} ms CPU -> "
          f"{1000 / statistics.median(after_cpu):.2f} ticks/s by CPU")
    print(f"detection run (healing_check): median {statistics.median(checks):.0f} ms, "
          f"max {max(checks):.0f} ms (the max includes planning the drain), {len(checks)} runs")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
