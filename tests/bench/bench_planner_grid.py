"""Scenario grid on Spark: 500 scenarios over a 10,000-partition cluster.

Run: .venv/bin/python tests/bench/bench_planner_grid.py [spark-master]
(default local[*]; prints figures, asserts nothing).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_planner import balanced_cluster  # noqa: E402

from planner.core import Options, plan, rack_additions, rack_losses, single_removals  # noqa: E402


def grid(cluster):
    scenarios = [*single_removals(cluster), *rack_losses(cluster)]
    return scenarios + rack_additions(cluster, up_to=(500 - len(scenarios)) // 10)


def main() -> None:
    master = sys.argv[1] if len(sys.argv) > 1 else "local[*]"
    cluster = balanced_cluster(spus=400, racks=10, topics=50, partitions=200,
                               replication=3, seed=3)
    scenarios = grid(cluster)
    start = time.perf_counter()
    plan(cluster, scenarios[0], Options())
    single = time.perf_counter() - start
    from planner.spark import evaluate_grid, spark_session

    start = time.perf_counter()
    spark = spark_session(master, "planner-grid-bench")
    started = time.perf_counter() - start
    start = time.perf_counter()
    rows = evaluate_grid(spark, cluster, scenarios)
    elapsed = time.perf_counter() - start
    spark.stop()
    print(f"Grid: {len(rows)} scenarios over 400 SPUs / 10 racks, 10,000 partitions, RF 3, "
          f"master {master}")
    print(f"  one plan in-process {single:.2f} s; Spark start {started:.1f} s; "
          f"grid {elapsed:.1f} s (target < 120 s)")
    print(f"  {'scenario':22} {'bound':>6} {'moved':>6} {'ratio':>6} {'spread':>6} "
          f"{'lead':>5} {'viol':>5} {'fail':>5}")
    for row in rows[:3] + rows[400:403] + rows[410:413] + rows[-3:]:
        print(f"  {row['scenario']:22} {row['lower_bound']:6} {row['replicas_moved']:6} "
              f"{row['moved_to_lower_bound'] or 0:6.3f} {row['replica_spread']:6} "
              f"{row['leader_spread']:5} {row['rack_violations']:5} "
              f"{row['failover_concentration']:5.2f}")
    errors = [r for r in rows if r["error"]]
    worst = max((r["moved_to_lower_bound"] or 0) for r in rows if not r["error"])
    print(f"  errors {len(errors)}; worst moved/lower bound {worst:.3f}")


if __name__ == "__main__":
    main()
