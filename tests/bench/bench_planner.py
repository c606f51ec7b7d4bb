"""Planner benchmarks: baseline comparison per scenario, and a 100k-partition plan.

Run: .venv/bin/python tests/bench/bench_planner.py   (figures, not asserts)
"""
from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from planner.core import (Cluster, Options, Scenario, Spu, Topic,  # noqa: E402
                          generate_plan, plan)
from planner.core.baseline import assign_rack_aware  # noqa: E402


def rack_aware_cluster(spus: int, racks: int, topics: int, partitions: int,
                       replication: int, seed: int) -> Cluster:
    """A cluster laid out the way Kafka would have created it, rack-aware."""
    nodes = tuple(Spu(i, f"rack-{i % racks}") for i in range(spus))
    rng = random.Random(seed)
    made = tuple(Topic(f"topic-{k:04d}", assign_rack_aware(nodes, partitions, replication, rng))
                 for k in range(topics))
    return Cluster(nodes, made)


def balanced_cluster(spus: int, racks: int, topics: int, partitions: int,
                     replication: int, seed: int) -> Cluster:
    """Per-topic balanced and rack-safe: consecutive runs of a rack-alternated
    SPU list from a random offset (each SPU leads at most one more than others)."""
    nodes = tuple(Spu(i, f"rack-{i % racks}") for i in range(spus))
    rng = random.Random(seed)
    made = []
    for k in range(topics):
        offset = rng.randrange(spus)
        made.append(Topic(f"topic-{k:04d}", tuple(
            tuple((offset + replication * p + j) % spus for j in range(replication))
            for p in range(partitions))))
    return Cluster(nodes, tuple(made))


def scenarios(cluster: Cluster) -> list[Scenario]:
    first = max(s.id for s in cluster.spus) + 1
    return [
        Scenario("no change"),
        Scenario("add 1 SPU to rack-0", add_spus=(Spu(first, "rack-0"),)),
        Scenario("add 3 SPUs (one per rack)",
                 add_spus=tuple(Spu(first + i, f"rack-{i}") for i in range(3))),
        Scenario("remove SPU 0", remove_spus=(0,)),
        Scenario("lose rack-2", lose_racks=("rack-2",)),
        Scenario("topic-0000 to RF 2", replication=(("topic-0000", 2),)),
    ]


def baseline_comparison() -> None:
    cluster = rack_aware_cluster(spus=12, racks=4, topics=20, partitions=24,
                                 replication=3, seed=1)
    print("Baseline comparison: 12 SPUs / 4 racks, 20 topics x 24 partitions, RF 3")
    header = f"{'scenario':28} {'bound':>6} {'moved':>6} {'--gen':>6}  " \
             f"{'spread':>6} {'--gen':>6}  {'lead':>5} {'--gen':>6}  {'viol':>4} {'--gen':>6}  " \
             f"{'fail%':>5} {'--gen':>6}  {'ms':>5}"
    print(header)
    for scenario in scenarios(cluster):
        start = time.perf_counter()
        ours = plan(cluster, scenario).metrics
        elapsed = (time.perf_counter() - start) * 1000
        theirs = generate_plan(cluster, scenario, seed=7).metrics
        print(f"{scenario.name:28} {ours['lower_bound']:6} {ours['replicas_moved']:6} "
              f"{theirs['replicas_moved']:6}  {ours['replica_spread']:6} "
              f"{theirs['replica_spread']:6}  {ours['leader_spread']:5} "
              f"{theirs['leader_spread']:6}  {ours['rack_violations']:4} "
              f"{theirs['rack_violations']:6}  {ours['failover_concentration']:5.2f} "
              f"{theirs['failover_concentration']:6.2f}  {elapsed:5.0f}")


def large_plan() -> None:
    start = time.perf_counter()
    cluster = balanced_cluster(spus=1000, racks=10, topics=200, partitions=500,
                               replication=3, seed=2)
    built = time.perf_counter() - start
    new = tuple(Spu(1000 + i, f"rack-{i % 10}") for i in range(100))
    scenario = Scenario("add 10% SPUs", add_spus=new)
    start = time.perf_counter()
    result = plan(cluster, scenario, Options())
    elapsed = time.perf_counter() - start
    m = result.metrics
    print(f"\nLarge plan: 1,000 SPUs / 10 racks, 100,000 partitions (200 x 500), RF 3, "
          f"adding 100 SPUs (cluster built in {built:.1f} s)")
    print(f"  plan time in-process: {elapsed:.2f} s (target < 30 s)")
    print(f"  replicas moved {m['replicas_moved']} / lower bound {m['lower_bound']} "
          f"(ratio {m['moved_to_lower_bound']:.3f}), partitions changed {m['partitions_changed']}, "
          f"leader changes {m['leader_changes']}")
    print(f"  replica spread {m['replica_spread']} (worst topic {m['topic_replica_spread']}), "
          f"leader spread {m['leader_spread']} (worst topic {m['topic_leader_spread']}), "
          f"rack violations {m['rack_violations']}, failover concentration "
          f"{m['failover_concentration']:.2f}")


if __name__ == "__main__":
    baseline_comparison()
    if "--quick" not in sys.argv:
        large_plan()
