"""Benchmark: how long dropping a large topic holds Redis.

A topic of N partitions (replication 3 on 50 SPUs, every partition's simulated producer
on) is made and stepped three times, then deleted; the tick that drops it is timed, and
the private Redis's slow log (threshold 0) gives its longest command and burst (one
client's run of commands: a bound on its longest transaction) and what took Redis
longest by kind. Real private Redis, throwaway SQLite. Prints figures, asserts nothing.

    .venv/bin/python tests/bench/bench_topic_drop.py [--partitions 100000] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from _django import setup_bench_store
    from _slowlog import SlowLog

    redis = setup_bench_store(Path(tempfile.mkdtemp(prefix="bench-drop-")), False, "drop",
                              LIVE_UPDATES="0")
    try:
        import bench_replication_shell as shell
        from cluster.services import topic_delete
        from cluster.services.replication import replication_tick
        from cluster.services.waiting import LocalQueue

        shell.build(50, args.partitions, rate=float(args.partitions))
        now = 1_000_000
        for _ in range(3):
            replication_tick(now=now, dispatch=LocalQueue())
            now += 1000
        log = SlowLog()
        log.start()
        topic_delete(name="bench")
        t = time.perf_counter()
        replication_tick(now=now, dispatch=LocalQueue())
        tick_ms = (time.perf_counter() - t) * 1000
        log.collect()
        result = {"partitions": args.partitions, "drop_tick_ms": round(tick_ms, 1),
                  "redis_max_command_ms": log.longest_us / 1000,
                  "redis_max_command": log.longest_detail[:120],
                  "redis_max_burst_ms": log.longest_burst_us / 1000,
                  "redis_by_kind": log.report()}
        log.stop()
        if args.json:
            print(json.dumps(result))
        else:
            print(f"{args.partitions:,} partitions dropped: tick {tick_ms:.0f} ms; longest "
                  f"Redis command {result['redis_max_command_ms']:.1f} ms "
                  f"({result['redis_max_command'][:60]}), burst "
                  f"{result['redis_max_burst_ms']:.1f} ms\n  Redis by kind (ms): "
                  f"{result['redis_by_kind']}")
    finally:
        os.killpg(redis.pid, signal.SIGTERM)  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
