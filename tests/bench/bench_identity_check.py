"""Benchmark of the store/Redis identity check every unit of work on the hot state runs.

Prints what one check costs (the store row, a GET of the marker, and judging them: no
verdict is kept between checks) beside what a unit of work paid before for its namespace
(the store row and a SET NX of the ``store`` key, which the claim now writes once).
Asserts nothing about time. A throwaway SQLite database and a private
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

    from cluster.engine import store_identity
    from cluster.adapters.redis_keys import client, key
    from webapp.redis_server import start_private_redis

    proc, settings.REDIS_URL = start_private_redis(workdir / "redis")
    try:
        first = micros(store_identity.check_hot_state_identity, 1)
        line("first check (claims the namespace)", first)
        def before() -> None:
            store = store_identity.store_id()
            client().set(key("store", store), store, nx=True)
        then, now = [], []
        for _ in range(rounds):  # interleaved: a loaded machine drifts between runs
            then += micros(before, 1)
            now += micros(store_identity.check_hot_state_identity, 1)
        line("store row + SET NX store key (before)", then)
        line("identity check (now: judged afresh each time)", now)
    finally:
        proc.terminate()
        proc.wait(5)


if __name__ == "__main__":
    main()
