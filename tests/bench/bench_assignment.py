"""Benchmark: computed assignment in-process and `topic create` through the service.

Targets (issue 2): a 100,000-partition, replication-3 map on 1,000 SPUs in
20 racks under 200 ms; a 10,000-partition topic through the service (rows
written) under 2 s on SQLite.  Run: .venv/bin/python tests/bench/bench_assignment.py
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cluster.core.assignment import computed_replica_map, rack_aware_replica_map  # noqa: E402


def timed(fn, repeat: int = 5) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def bench_core() -> None:
    spus = list(range(1000))
    racks = {spu: f"rack-{spu % 20:02d}" for spu in spus}
    plain = timed(lambda: computed_replica_map(spus, 100_000, 3, start=12345))
    racked = timed(lambda: rack_aware_replica_map(racks, 100_000, 3, start=12345))
    print(f"replica map 100,000 partitions x rf 3 on 1,000 SPUs (no racks):   {plain:8.1f} ms (target < 200)")
    print(f"replica map 100,000 partitions x rf 3 on 1,000 SPUs in 20 racks: {racked:8.1f} ms (target < 200)")


def bench_service() -> None:
    from tests.bench._django import setup_throwaway_django

    setup_throwaway_django()
    from cluster.models import Partition
    from cluster.services import spu_register, topic_create

    for spu in range(1000):
        spu_register(spu_id=spu, rack=f"rack-{spu % 20:02d}")
    samples = []
    for run in range(3):
        start = time.perf_counter()
        topic_create(name=f"big-{run}", partitions=10_000, replication=3)
        samples.append(time.perf_counter() - start)
    rows = Partition.objects.count()
    print(f"topic create, 10,000 partitions through the service on SQLite: "
          f"median {statistics.median(samples) * 1000:.0f} ms over 3 runs "
          f"({rows} partition rows written; target < 2000 ms)")


if __name__ == "__main__":
    bench_core()
    bench_service()
