"""Benchmark: how long each hot-state Redis server is held while a sharded engine steps.

A sharded engine's shards save their own sets; spread over several servers
(``HOT_STATE_REDIS_URLS``), each shard's save lands on the server its keys live on. For N
partitions (topics of at most 100,000, replication 3 on 50 SPUs, every partition's
simulated producer writing one record a second) on ``--shards`` shards and ``--hot-redis``
servers of their own (0: the broker's one, as by default), the first whole tick runs in
this process, then ``--steps`` busy steps as the workers run them (the coordinator's tick
and every shard's). Each server's slow log (threshold 0) gives its longest command and its
longest burst (one client's run of commands: a bound on its longest transaction) in the
first tick and in the steps. Real private Redis, throwaway SQLite. Prints figures, asserts
nothing.

    .venv/bin/python tests/bench/bench_spread_saves.py [--partitions 100000] [--shards 12]
        [--hot-redis 2] [--steps 3] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))

SPUS = 50


def held(logs: list) -> list[dict[str, object]]:
    """Each server's longest command and burst since its log was last forgotten, in ms."""
    return [{"server": i, "max_command_ms": round(log.longest_us / 1000, 1),
             "max_burst_ms": round(log.longest_burst_us / 1000, 1),
             "command": log.longest_command, "detail": log.longest_detail[:120]}
            for i, log in enumerate(logs)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=12)
    parser.add_argument("--hot-redis", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from _django import setup_bench_store
    from _slowlog import SlowLog
    from bench_periodic_tasks import step_all
    from bench_sharded_ticks import grow_to, start_hot_redis

    workdir = Path(tempfile.mkdtemp(prefix="bench-spread-"))
    hot = start_hot_redis(workdir, args.hot_redis)
    redis = setup_bench_store(workdir, False, "spread", REPLICATION_SHARDS=str(args.shards),
                              LIVE_UPDATES="0", REPLICATION_SIMULATED_PRODUCERS="1",
                              HOT_STATE_REDIS_URLS=",".join(url for _, url in hot))
    try:
        from cluster.adapters import hot_servers
        from cluster.services import replication, spu_connect, spu_register

        for i in range(SPUS):
            spu_register(spu_id=i)
            spu_connect(spu_id=i)
        grow_to(args.partitions, 0)
        logs = [SlowLog(hot_servers.client_of(s)) for s in hot_servers.servers()]
        for log in logs:
            log.start()
        t = time.perf_counter()
        replication.replication_tick()
        first_ms = (time.perf_counter() - t) * 1000
        for log in logs:
            log.collect()
        first = held(logs)
        for log in logs:
            log.forget()
        step_all()  # a quiet step: every shard reads its sets once
        for log in logs:
            log.collect()
            log.forget()
        walls = []
        for _ in range(args.steps):
            t = time.perf_counter()
            step_all()
            walls.append((time.perf_counter() - t) * 1000)
            for log in logs:
                log.collect()
        steps = held(logs)
        for log in logs:
            log.stop()
        result = {"partitions": args.partitions, "shards": args.shards,
                  "hot_redis": args.hot_redis, "servers": len(logs),
                  "first_tick_ms": round(first_ms), "first_tick": first,
                  "step_ms": round(statistics.median(walls)), "steps": steps,
                  "redis_max_command_ms": max(s["max_command_ms"] for s in steps),
                  "redis_max_burst_ms": max(s["max_burst_ms"] for s in steps)}
        if args.json:
            print(json.dumps(result))
        else:
            print(f"{args.partitions:,} partitions, {args.shards} shards, {len(logs)} "
                  f"server(s): first tick {first_ms:.0f} ms, busy step median "
                  f"{result['step_ms']} ms")
            for label, rows in (("first tick", first), ("busy steps", steps)):
                for row in rows:
                    print(f"  {label:<10} server {row['server']}: longest command "
                          f"{row['max_command_ms']} ms ({row['command']}), burst "
                          f"{row['max_burst_ms']} ms")
    finally:
        for proc in dict.fromkeys([redis, *(p for p, _ in hot)]):
            os.killpg(proc.pid, signal.SIGTERM)  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
