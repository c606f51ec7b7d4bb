"""Scenario grid on Spark: 500 scenarios over a 10,000- or 100,000-partition cluster.

Run: .venv/bin/python tests/bench/bench_planner_grid.py [MASTER] [--partitions 100000]
     [--scenarios 500] [--standalone]
MASTER defaults to local[*]; --standalone starts a loopback standalone master
and worker from pyspark's spark-class (planner.spark.standalone) and runs
there. Prints figures, asserts nothing. With --scenarios below 500 it also
prints the wall time extrapolated to 500 (per-scenario cost times 500).

Besides the grid's wall time it prints the CPU of the whole run (driver, JVM,
Python workers: the process tree) and, from three scenarios planned in-process
(one of each kind), the CPU per stage of the pure planner: where a scenario's
time goes. The machine is shared: read wall time next to the load average.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_planner import balanced_cluster  # noqa: E402

from planner.core import Options, plan, rack_additions, rack_losses, single_removals  # noqa: E402

SHAPES = {10_000: dict(spus=400, racks=10, topics=50, partitions=200),
          100_000: dict(spus=1000, racks=10, topics=200, partitions=500)}


def grid(cluster, count: int = 500):
    """Rack losses, then rack growth and single-SPU removals dealt in turn."""
    additions = rack_additions(cluster, up_to=4)
    removals = single_removals(cluster)
    mixed = [s for pair in zip(removals, additions) for s in pair]
    rest = removals[len(additions):]
    return [*rack_losses(cluster), *mixed, *rest][:count]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("master", nargs="?", default="local[*]")
    parser.add_argument("--partitions", type=int, choices=sorted(SHAPES), default=10_000)
    parser.add_argument("--scenarios", type=int, default=500)
    parser.add_argument("--standalone", action="store_true")
    args = parser.parse_args()
    shape = SHAPES[args.partitions]
    cluster = balanced_cluster(**shape, replication=3, seed=3)
    scenarios = grid(cluster, args.scenarios)
    start, cpu = time.perf_counter(), _cpu()
    plan(cluster, scenarios[1], Options())
    single, single_cpu = time.perf_counter() - start, _cpu() - cpu
    stages = stage_breakdown(cluster, scenarios)
    load_before = os.getloadavg()[0]
    with _cluster(args) as master:
        rows, started, elapsed, tree_cpu = _run(master, cluster, scenarios)
    print(f"Grid: {len(rows)} scenarios over {shape['spus']} SPUs / {shape['racks']} racks, "
          f"{args.partitions:,} partitions, RF 3, master {master}")
    print(f"  grid CPU (driver + JVM + Python workers) {tree_cpu:.0f} s = "
          f"{tree_cpu / len(rows):.2f} s per scenario; load average {load_before:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after")
    print("  CPU per stage of one scenario (in-process, mean of "
          f"{len(stages['total'])}): " + ", ".join(
              f"{name} {sum(v) / len(v):.2f} s" for name, v in stages.items()))
    print(f"  one plan in-process {single:.2f} s wall, {single_cpu:.2f} s CPU; "
          f"Spark start {started:.1f} s; grid {elapsed:.1f} s wall "
          f"({elapsed / len(rows):.2f} s per scenario); load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} cores")
    print(f"  CPU estimate for 500 scenarios on {os.cpu_count()} idle cores: "
          f"{500 * single_cpu / (os.cpu_count() or 1):.0f} s")
    if len(rows) < 500:
        print(f"  extrapolated to 500 scenarios: {elapsed / len(rows) * 500:.0f} s")
    _table(rows)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cluster(args):
    if not args.standalone:
        return nullcontext(args.master)
    from planner.spark.standalone import standalone_cluster

    return standalone_cluster(Path(tempfile.mkdtemp(prefix="grid-standalone-")), cores=2,
                              memory="3g")


def stage_breakdown(cluster, scenarios) -> dict[str, list[float]]:
    """CPU seconds per stage of ``planner.plan`` for one scenario of each kind
    (a rack loss, a growth, a removal): the same steps in the same order."""
    from planner.core import planner as steps
    from planner.core.metrics import layout_metrics, moves_between, movement_metrics
    from planner.core.order import order_all
    from planner.core.rebalance import assign_topic

    kinds: dict[str, object] = {}
    for scenario in scenarios:
        kinds.setdefault(scenario.name.split("-")[0], scenario)
    stages: dict[str, list[float]] = {}

    def timed(name, fn, *args):
        cpu = time.process_time()
        result = fn(*args)
        stages.setdefault(name, []).append(time.process_time() - cpu)
        return result

    for scenario in kinds.values():
        prep = timed("prepare", steps.prepare, cluster, scenario, Options())
        facts = steps.current_facts(cluster)
        quotas = timed("quotas", steps.replica_quotas, prep,
                       [facts.counts[s.topic] for s in prep.shares], facts)
        tasks = steps.topic_tasks(prep, quotas)
        placed = {t.topic: t.current for t in tasks}
        placed.update(timed("placement", lambda: {t.topic: assign_topic(t) for t in tasks
                                                   if not steps.already_placed(t, facts)}))
        names = [s.topic for s in prep.shares]
        current = {t.name: t.replicas for t in cluster.topics}
        leaders = timed("leaders", steps.leaders_for, prep, quotas, placed)
        target = timed("order", order_all, names, placed, leaders, current, True)
        timed("metrics", lambda: (
            movement_metrics(moves_between(current, target, steps.actual_leaders(cluster)),
                             cluster.topics, steps.lower_bound(prep)),
            layout_metrics(target, prep.effective.spus)))
    stages["total"] = [sum(v[i] for v in stages.values()) for i in range(len(kinds))]
    return stages


def _tree_cpu() -> float:
    """CPU of this process and every descendant (the JVM and its Python workers)."""
    import psutil

    me = psutil.Process()
    total = sum(me.cpu_times()[:2])
    for child in me.children(recursive=True):
        try:
            times = child.cpu_times()
            total += times.user + times.system
        except psutil.Error:
            pass
    return total


def _run(master: str, cluster, scenarios):
    from planner.spark import evaluate_grid, spark_session

    start = time.perf_counter()
    spark = spark_session(master, "planner-grid-bench")
    started = time.perf_counter() - start
    start, cpu = time.perf_counter(), _tree_cpu()
    rows = evaluate_grid(spark, cluster, scenarios)
    elapsed, cpu = time.perf_counter() - start, _tree_cpu() - cpu
    spark.stop()
    return rows, started, elapsed, cpu


def _table(rows) -> None:
    print(f"  {'scenario':22} {'bound':>6} {'moved':>6} {'ratio':>6} {'spread':>6} "
          f"{'lead':>5} {'viol':>5} {'fail':>5}")
    for row in rows[:3] + rows[-3:]:
        if row["error"]:
            print(f"  {row['scenario']:22} error: {row['error']}")
            continue
        print(f"  {row['scenario']:22} {row['lower_bound']:6} {row['replicas_moved']:6} "
              f"{row['moved_to_lower_bound'] or 0:6.3f} {row['replica_spread']:6} "
              f"{row['leader_spread']:5} {row['rack_violations']:5} "
              f"{row['failover_concentration']:5.2f}")
    errors = [r for r in rows if r["error"]]
    worst = max(((r["moved_to_lower_bound"] or 0) for r in rows if not r["error"]), default=0)
    print(f"  errors {len(errors)}; worst moved/lower bound {worst:.3f}")


if __name__ == "__main__":
    main()
