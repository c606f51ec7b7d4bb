"""Random what-ifs through the command's path: plan time and moves / lower bound.

Run: .venv/bin/python tests/bench/bench_planner_random.py [CASES] [FIRST_SEED]
Wall time is what a user waits; CPU time (this process) is steadier on a shared machine.
(figures, not asserts; the seeded set of ``tests/unit/planner/core/random_whatifs.py``).
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.unit.planner.core.random_whatifs import random_whatif, run_case  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 120
    first = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    times, cpu, ratios, slow = [], [], [], []
    violations = stopped = 0
    for seed in range(first, first + cases):
        case = random_whatif(seed)
        started = time.process_time()
        _, document, took = run_case(case)
        cpu.append(time.process_time() - started)
        m = document["metrics"]
        times.append(took)
        ratios.append(m["moved_to_lower_bound"])
        violations += m["rack_violations"]
        stopped += bool(m.get("search_stopped_early"))
        slow.append((took, seed, case.partitions, case.scenario.name, len(case.spus),
                     m["replicas_moved"], m["lower_bound"]))
    print(f"{cases} what-ifs (seeds {first}..{first + cases - 1}), "
          f"{sum(c[2] for c in slow):,} partitions in all")
    print(f"plan time   p50 {percentile(times, 0.5):.3f} s   p99 {percentile(times, 0.99):.3f} s"
          f"   max {max(times):.3f} s   total {sum(times):.1f} s (wall)")
    print(f"            p50 {percentile(cpu, 0.5):.3f} s   p99 {percentile(cpu, 0.99):.3f} s"
          f"   max {max(cpu):.3f} s   total {sum(cpu):.1f} s (CPU)")
    print(f"moves / lower bound   median {statistics.median(ratios):.4f}   "
          f"p99 {percentile(ratios, 0.99):.4f}   max {max(ratios):.4f}   "
          f"mean {statistics.fmean(ratios):.4f}")
    print(f"rack violations {violations}, searches stopped early {stopped}")
    print("slowest: seconds, seed, partitions, what-if, SPUs, moved, lower bound")
    for row in sorted(slow, reverse=True)[:8]:
        print(f"  {row[0]:7.3f}  seed {row[1]:4d}  {row[2]:6d}  {row[3]:<11} {row[4]:3d}"
              f"  {row[5]:6d}  {row[6]:6d}")


if __name__ == "__main__":
    main()
