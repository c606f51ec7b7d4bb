"""SPU groups of 100 SPUs: create, scale and delete through the services.

Run: .venv/bin/python tests/bench/bench_spg.py [--replicas 100] [--runs 5]
A throwaway SQLite store and a private Redis (never one it did not start). Each run
creates a group of ``--replicas`` SPUs, scales it to twice that, and deletes it; each
managed SPU is a logged intent (spu-register / spu-unregister, issue 32) whose rows the
store's projection writes. Prints the median and best wall and CPU seconds of each step.
Figures, not assertions (DESIGN.md).
"""
from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))
from _django import setup_bench_store  # noqa: E402

TMP = Path(tempfile.mkdtemp(prefix="bench-spg-"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--replicas", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    redis_proc = setup_bench_store(TMP, False, "spg")
    try:
        from cluster.services import groups
        steps: dict[str, list[tuple[float, float]]] = {"create": [], "scale": [], "delete": []}
        for run in range(args.runs):
            name = f"bench-{run}"
            calls = {
                "create": lambda: groups.spg_create(name=name, replicas=args.replicas),
                "scale": lambda: groups.spg_scale(name=name, replicas=2 * args.replicas),
                "delete": lambda: groups.spg_delete(name=name),
            }
            for step, call in calls.items():
                wall, cpu = time.perf_counter(), time.process_time()
                call()
                steps[step].append((time.perf_counter() - wall, time.process_time() - cpu))
        logging.getLogger("cluster.adapters.live_batches").setLevel(logging.CRITICAL)
        for step, figures in steps.items():
            walls, cpus = [w for w, _ in figures], [c for _, c in figures]
            spus = {"create": args.replicas, "scale": args.replicas,
                    "delete": 2 * args.replicas}[step]
            print(f"spg {step:<7} ({spus:>4} SPUs logged): wall median {statistics.median(walls):.3f} s best {min(walls):.3f} s, "
                  f"CPU median {statistics.median(cpus):.3f} s", flush=True)
    finally:
        redis_proc.terminate()
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
