"""One large plan through ``plan_distributed`` on Spark, with driver memory.

Default: 1,000,000 partitions at RF 3 on 2,000 SPUs in 40 racks, adding 10%.
``--partitions 3300000 --spus 5000 --racks 50`` is the ten-million-replica
case of issue 14. Prints wall time, the driver's peak memory (the Python
process's ru_maxrss, and its JVM's largest RSS sampled every 0.5 s with
psutil) and the plan's quality. Asserts nothing.

``--streamed`` runs ``plan_streamed`` instead: the topics are generated on
the executors (same shape: runs of a rack-alternated SPU list from a random
offset per topic), the driver never builds the ``Cluster``, and the moves
are written as JSON lines to a temporary directory.

Run: .venv/bin/python tests/bench/bench_planner_distributed.py [MASTER]
     [--partitions N] [--spus N] [--racks N] [--standalone] [--streamed]
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import tempfile
import threading
import time
from contextlib import nullcontext
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_planner import balanced_cluster  # noqa: E402

from planner.core import Options, Scenario, Spu, Topic  # noqa: E402

PER_TOPIC = 500


class JvmPeak(threading.Thread):
    """Largest RSS of this process's child JVMs (the Spark driver), sampled."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0
        self.running = True

    def run(self) -> None:
        me = psutil.Process()
        while self.running:
            try:
                rss = sum(c.memory_info().rss for c in me.children(recursive=True)
                          if "java" in c.name())
            except psutil.Error:
                rss = 0
            self.peak = max(self.peak, rss)
            time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("master", nargs="?", default="local[*]")
    parser.add_argument("--partitions", type=int, default=1_000_000)
    parser.add_argument("--spus", type=int, default=2000)
    parser.add_argument("--racks", type=int, default=40)
    parser.add_argument("--standalone", action="store_true")
    parser.add_argument("--streamed", action="store_true")
    args = parser.parse_args()
    if args.streamed:
        return streamed(args)
    start = time.perf_counter()
    cluster = balanced_cluster(spus=args.spus, racks=args.racks,
                               topics=args.partitions // PER_TOPIC, partitions=PER_TOPIC,
                               replication=3, seed=2)
    built = time.perf_counter() - start
    added = tuple(Spu(args.spus + i, f"rack-{i % args.racks}") for i in range(args.spus // 10))
    scenario = Scenario("add 10% SPUs", add_spus=added)
    jvm = JvmPeak()
    jvm.start()
    with _cluster(args) as master:
        result, started, elapsed = _run(master, cluster, scenario)
    jvm.running = False
    m = result.metrics
    print(f"Distributed plan: {args.spus:,} SPUs / {args.racks} racks, "
          f"{len(cluster.topics) * PER_TOPIC:,} partitions, RF 3, adding {len(added)} SPUs, "
          f"master {master} (cluster built in {built:.0f} s)")
    print(f"  Spark start {started:.1f} s; plan {elapsed:.1f} s wall")
    print(f"  driver peak memory: Python {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
          f" (holds the whole layout), JVM {jvm.peak / 2**20:.0f} MB")
    print(f"  replicas moved {m['replicas_moved']} / lower bound {m['lower_bound']}, "
          f"replica spread {m['replica_spread']}, leader spread {m['leader_spread']}, "
          f"rack violations {m['rack_violations']}")


def offset_topic(k: int, spus: int, partitions: int, replication: int, seed: int) -> Topic:
    """Topic ``k`` as ``balanced_cluster`` lays one out, its offset drawn
    from a per-topic seed so that any executor can build any topic."""
    offset = random.Random(seed * 1_000_003 + k).randrange(spus)
    return Topic(f"topic-{k:07d}", tuple(
        tuple((offset + replication * p + j) % spus for j in range(replication))
        for p in range(partitions)))


def streamed(args) -> None:
    from planner.spark import generated_topics, plan_streamed, spark_session

    nodes = tuple(Spu(i, f"rack-{i % args.racks}") for i in range(args.spus))
    added = tuple(Spu(args.spus + i, f"rack-{i % args.racks}") for i in range(args.spus // 10))
    scenario = Scenario("add 10% SPUs", add_spus=added)
    topics, spus = args.partitions // PER_TOPIC, args.spus
    jvm = JvmPeak()
    jvm.start()
    moves_dir = Path(tempfile.mkdtemp(prefix="plan-moves-")) / "moves"
    with _cluster(args) as master:
        start = time.perf_counter()
        spark = spark_session(master, "planner-streamed-bench")
        started = time.perf_counter() - start
        start = time.perf_counter()
        source = generated_topics(spark, topics,
                                  lambda k: offset_topic(k, spus, PER_TOPIC, 3, seed=2))
        result = plan_streamed(spark, nodes, source, scenario, Options(), str(moves_dir))
        elapsed = time.perf_counter() - start
        spark.stop()
    jvm.running = False
    m = result.metrics
    written = sum(p.stat().st_size for p in moves_dir.glob("part-*"))
    print(f"Streamed plan: {args.spus:,} SPUs / {args.racks} racks, {result.partitions:,} "
          f"partitions in {result.topics:,} topics, RF 3, adding {len(added)} SPUs, "
          f"master {master}")
    print(f"  Spark start {started:.1f} s; plan {elapsed:.1f} s wall "
          f"(topics generated on the executors, inside the plan time)")
    print(f"  driver peak memory: Python {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB"
          f" (never holds the layout), JVM {jvm.peak / 2**20:.0f} MB")
    print(f"  replicas moved {m['replicas_moved']} / lower bound {m['lower_bound']}, "
          f"replica spread {m['replica_spread']}, leader spread {m['leader_spread']}, "
          f"rack violations {m['rack_violations']}, partitions changed {m['partitions_changed']}, "
          f"failover concentration {m['failover_concentration']:.3f}")
    print(f"  moves written: {written / 2**20:.0f} MB of JSON lines in {moves_dir}")
    print(f"  load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def _cluster(args):
    if not args.standalone:
        return nullcontext(args.master)
    from planner.spark.standalone import standalone_cluster

    return standalone_cluster(Path(tempfile.mkdtemp(prefix="plan-standalone-")), cores=2,
                              memory="3g")


def _run(master: str, cluster, scenario):
    from planner.spark import plan_distributed, spark_session

    start = time.perf_counter()
    spark = spark_session(master, "planner-distributed-bench")
    started = time.perf_counter() - start
    start = time.perf_counter()
    result = plan_distributed(spark, cluster, scenario, Options())
    elapsed = time.perf_counter() - start
    spark.stop()
    return result, started, elapsed


if __name__ == "__main__":
    main()
