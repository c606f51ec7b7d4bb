"""Benchmark of the store/Redis identity check every unit of work on the hot state runs.

Prints what one check costs once verified (a GET of the marker and the store row)
beside what resolving the store id alone cost before (the row only), and the first,
full check. Asserts nothing about time. A throwaway SQLite database and a private
Redis. Run:
    .venv/bin/python tests/bench/bench_identity_check.py [--rounds 2000]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup_throwaway_django  # noqa: E402


def micros(fn, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e6)
    return out


def line(label: str, times: list[float]) -> None:
    print(f"{label:<52} median {statistics.median(times):7.1f} us  "
          f"(p90 {sorted(times)[int(len(times) * 0.9)]:.1f}, {len(times)} rounds)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2000)
    rounds = parser.parse_args().rounds
    workdir = setup_throwaway_django()
    from django.conf import settings

    from cluster.adapters import store_identity
    from webapp.redis_server import start_private_redis

    proc, settings.REDIS_URL = start_private_redis(workdir / "redis")
    try:
        first = micros(store_identity.check_hot_state_identity, 1)
        line("first check (claims the namespace)", first)
        line("store id alone (what a unit of work paid before)",
             micros(store_identity.store_id, rounds))
        line("identity check, verified (a unit of work now)",
             micros(store_identity.check_hot_state_identity, rounds))

        def full() -> None:
            store_identity.forget_verified()
            store_identity.check_hot_state_identity()
        line("identity check, not cached (after a change)", micros(full, rounds // 10))
    finally:
        proc.terminate()
        proc.wait(5)


if __name__ == "__main__":
    main()
