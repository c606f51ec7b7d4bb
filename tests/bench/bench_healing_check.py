"""Benchmark: one self-healing detection run on a steady cluster (nothing to find).

The beat runs the detector every HEALING_CHECK_INTERVAL_S (5 s) on a worker beside the
engine's ticks, so its cost on a quiet cluster is taken from the ticks' budget. Builds
50 SPUs and one topic (replication 3), steps the engine once, then times RUNS detection
runs (wall and CPU of this process; the database's own CPU apart). Prints figures;
asserts nothing. A throwaway SQLite database and a private Redis. Run:
    .venv/bin/python tests/bench/bench_healing_check.py [--partitions 100000] [--runs 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup_throwaway_django  # noqa: E402
from bench_replication_shell import build, setup_redis  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    workdir = setup_throwaway_django()
    proc = setup_redis(workdir)
    try:
        from cluster.services.replication import replication_tick
        from cluster.services.waiting import LocalQueue
        from healing.services import healing_check

        build(50, args.partitions)
        replication_tick(now=int(time.time() * 1000), dispatch=LocalQueue())
        at = int(time.time() * 1000)
        healing_check(now_ms=at)  # the first run writes what it saw
        walls, cpus = [], []
        for i in range(args.runs):
            wall, cpu = time.perf_counter(), time.process_time()
            healing_check(now_ms=at + 5000 * (i + 1))
            walls.append((time.perf_counter() - wall) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
        print(f"{args.partitions:,} partitions, a steady cluster: detection run median "
              f"{statistics.median(walls):.0f} ms wall, {statistics.median(cpus):.0f} ms CPU "
              f"(min {min(cpus):.0f}, max {max(cpus):.0f}, {args.runs} runs) -> "
              f"{statistics.median(cpus) / 5000 * 100:.1f}% of a core at one run every 5 s")
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
