"""A byte-balanced plan of 1,000,000 partitions with sizes, beside today's count plan of
the same cluster, in the same run.

2,000 SPUs in 40 racks, 2,000 topics x 500 partitions, RF 3, sizes from a Pareto
distribution (a few huge partitions, most small), adding 10% SPUs (five per rack). Each
plan runs in its own child process, so each peak RSS is its own (the cluster included).

Run: .venv/bin/python tests/bench/bench_plan_bytes.py [SPUS RACKS TOPICS PARTITIONS]
(figures, not asserts).
"""
from __future__ import annotations

import random
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

SHAPE = (2000, 40, 2000, 500)


def build(spus: int, racks: int, topics: int, partitions: int):
    from bench_planner import balanced_cluster

    from planner.core import Cluster, Topic

    cluster = balanced_cluster(spus=spus, racks=racks, topics=topics, partitions=partitions,
                               replication=3, seed=2)
    rng = random.Random(34)
    sized = tuple(Topic(t.name, t.replicas, tuple(int(min(rng.paretovariate(1.2), 5e4) * 1e6)
                                                  for _ in t.replicas))
                  for t in cluster.topics)
    return Cluster(cluster.spus, sized)


def child(mode: str, shape: tuple[int, ...]) -> None:
    from planner.core import Options, Scenario, Spu, plan
    from planner.core.bytes_balance import plan_bytes

    cluster = build(*shape)
    spus, racks = shape[0], shape[1]
    added = tuple(Spu(spus + i, f"rack-{i % racks}") for i in range(spus // 10))
    scenario = Scenario("add 10% SPUs", add_spus=added)
    wall, cpu = time.perf_counter(), time.process_time()
    result = plan(cluster, scenario, Options()) if mode == "counts" else \
        plan_bytes(cluster, scenario, Options())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    m = result.metrics
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    extra = f", disk spread {m['disk_spread'] / 1e9:.1f} GB (band {m['band_bytes'] / 1e9:.1f})" \
        if mode == "bytes" else ""
    print(f"{mode:<7} plan: wall {wall:6.1f} s  cpu {cpu:6.1f} s  peak RSS {peak:6.0f} MB  "
          f"replicas moved {m['replicas_moved']:,}  bytes moved "
          f"{(m['bytes_moved'] or 0) / 1e12:.2f} TB{extra}", flush=True)


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child(sys.argv[2], tuple(map(int, sys.argv[3:])))
        return
    shape = tuple(map(int, sys.argv[1:5])) if len(sys.argv) >= 5 else SHAPE
    print(f"{shape[0]:,} SPUs / {shape[1]} racks, {shape[2] * shape[3]:,} partitions, RF 3, "
          f"Pareto sizes, adding {shape[0] // 10} SPUs")
    for mode in ("counts", "bytes"):
        subprocess.run([sys.executable, __file__, "--child", mode, *map(str, shape)],
                       check=True)


if __name__ == "__main__":
    main()
