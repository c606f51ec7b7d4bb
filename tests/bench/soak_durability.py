"""Long soak of the seeded fault schedules over the pure replication core.

    .venv/bin/python tests/bench/soak_durability.py [SCHEDULES] [--budget SECONDS]
        [--first-seed N] [--workers N]

Defaults: 100,000 schedules, no time budget, seeds from 0, one worker per CPU.
Prints schedules, steps and rates; exits 1 with the failing seed (replay it
with cluster.testing.faults.replay(seed)) if an invariant breaks.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cluster.testing.faults import FaultTotals, run_many  # noqa: E402
from cluster.testing.invariants import InvariantViolation  # noqa: E402

CHUNK = 2_000


def _chunk(args: tuple[int, int]) -> FaultTotals | str:
    first, count = args
    try:
        return run_many(count, first_seed=first)
    except InvariantViolation as exc:
        return str(exc)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("schedules", nargs="?", type=int, default=100_000)
    ap.add_argument("--budget", type=float, default=None,
                    help="stop at the first chunk boundary after this many seconds")
    ap.add_argument("--first-seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    start = time.perf_counter()
    deadline = None if args.budget is None else start + args.budget
    jobs = [(s, min(CHUNK, args.first_seed + args.schedules - s))
            for s in range(args.first_seed, args.first_seed + args.schedules, CHUNK)]
    total = FaultTotals()
    with ProcessPoolExecutor(args.workers) as pool:
        for result in pool.map(_chunk, jobs):
            if isinstance(result, str):
                print(f"INVARIANT BROKEN\n{result}")
                pool.shutdown(cancel_futures=True)
                return 1
            for f in ("schedules", "steps", "produced", "acked_all", "elections", "crashes"):
                setattr(total, f, getattr(total, f) + getattr(result, f))
            if deadline is not None and time.perf_counter() > deadline:
                pool.shutdown(cancel_futures=True)
                break
    wall = time.perf_counter() - start
    print(f"{total.schedules:,} schedules, {total.steps:,} steps in {wall:.1f} s with "
          f"{args.workers} workers: {total.schedules / wall:,.0f} schedules/s, "
          f"{total.steps / wall:,.0f} steps/s")
    print(f"{total.produced:,} records produced, {total.acked_all:,} acks=all acknowledged, "
          f"{total.crashes:,} SPU crashes, {total.elections:,} candidate proposals; no invariant broken")
    return 0


if __name__ == "__main__":
    sys.exit(main())
