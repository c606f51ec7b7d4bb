"""One plan past Cruise Control's scale: 1,000,000 partitions at RF 3.

2,000 SPUs in 40 racks, 2,000 topics x 500 partitions, adding 10% SPUs (five
per rack). Prints build time, plan time, peak memory (ru_maxrss of this
process, which includes the cluster itself) and the plan's quality.

Run: .venv/bin/python tests/bench/bench_planner_million.py [--profile FILE]
(figures, not asserts).
"""
from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_planner import balanced_cluster  # noqa: E402

from planner.core import Options, Scenario, Spu, plan  # noqa: E402

SPUS, RACKS, TOPICS, PARTITIONS = 2000, 40, 2000, 500


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_s() -> float:
    """CPU seconds of this process: on a shared machine wall time also counts
    the waits for a core, CPU time does not."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    start = time.perf_counter()
    cluster = balanced_cluster(spus=SPUS, racks=RACKS, topics=TOPICS, partitions=PARTITIONS,
                               replication=3, seed=2)
    built = time.perf_counter() - start
    after_build = peak_mb()
    added = tuple(Spu(SPUS + i, f"rack-{i % RACKS}") for i in range(SPUS // 10))
    scenario = Scenario("add 10% SPUs", add_spus=added)
    start, cpu = time.perf_counter(), cpu_s()
    if "--profile" in sys.argv:
        import cProfile

        profiler = cProfile.Profile()
        result = profiler.runcall(plan, cluster, scenario, Options())
        profiler.dump_stats(sys.argv[sys.argv.index("--profile") + 1])
    else:
        result = plan(cluster, scenario, Options())
    elapsed, cpu = time.perf_counter() - start, cpu_s() - cpu
    m = result.metrics
    print(f"Million plan: {SPUS:,} SPUs / {RACKS} racks, {TOPICS * PARTITIONS:,} partitions "
          f"({TOPICS} x {PARTITIONS}), RF 3, adding {len(added)} SPUs")
    print(f"  cluster built in {built:.1f} s, peak RSS after build {after_build:.0f} MB")
    print(f"  plan time in-process: {elapsed:.1f} s wall, {cpu:.1f} s CPU (goal < 15 s); "
          f"peak RSS {peak_mb():.0f} MB (goal < 1024 MB)")
    print(f"  load average while it ran: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"  replicas moved {m['replicas_moved']} / lower bound {m['lower_bound']}, "
          f"partitions changed {m['partitions_changed']}, leader changes {m['leader_changes']}")
    print(f"  replica spread {m['replica_spread']} (worst topic {m['topic_replica_spread']}), "
          f"leader spread {m['leader_spread']} (worst topic {m['topic_leader_spread']}), "
          f"rack violations {m['rack_violations']}")


if __name__ == "__main__":
    main()
