"""Benchmark: a producer's wait for the hot state's lease behind ticks that never let go.

A ticker thread holds the lease for ``--hold-ms`` (a tick that overruns its interval,
as at 100,000 partitions on one shard) and takes it again the moment it let it go; a
producer takes it ``--produces`` times meanwhile. Prints the producer's waits and how
many ticks ran during each, then what an uncontended take and release costs. A
private Redis and a throwaway SQLite database; asserts nothing. Run:
    .venv/bin/python tests/bench/bench_lease_turns.py [--hold-ms 200] [--produces 20]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup_throwaway_django  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hold-ms", type=float, default=200)
    parser.add_argument("--produces", type=int, default=20)
    args = parser.parse_args()
    workdir = setup_throwaway_django()
    from django.conf import settings

    from cluster.adapters import lease
    from cluster.ports import bound_to_store
    from cluster.engine.store_identity import check_hot_state_identity
    from webapp.redis_server import start_private_redis

    proc, settings.REDIS_URL = start_private_redis(workdir / "redis")
    try:
        store = check_hot_state_identity()
        ticks, stop, waits = [0], threading.Event(), []

        def ticker() -> None:
            with bound_to_store(store):
                while not stop.is_set():
                    with lease.held(60):
                        ticks[0] += 1
                        time.sleep(args.hold_ms / 1000)

        thread = threading.Thread(target=ticker)
        thread.start()
        time.sleep(args.hold_ms / 2000)
        with bound_to_store(store):
            for _ in range(args.produces):
                began, seen = time.perf_counter(), ticks[0]
                with lease.held(60):
                    waits.append((time.perf_counter() - began, ticks[0] - seen))
                time.sleep(args.hold_ms / 3000)  # the next write comes mid-tick
        stop.set()
        thread.join()
        ms = sorted(w * 1000 for w, _ in waits)
        print(f"producer behind {args.hold_ms:g} ms ticks: wait p50 {statistics.median(ms):.0f} ms, "
              f"max {ms[-1]:.0f} ms; ticks begun during a wait: max {max(n for _, n in waits)}")
        costs = []
        with bound_to_store(store):
            for _ in range(500):
                began = time.perf_counter()
                lease.acquire(1).release()
                costs.append((time.perf_counter() - began) * 1e6)
        print(f"uncontended take + release: median {statistics.median(costs):.0f} us")
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
