"""/metrics at 100,000 partitions: server time of one scrape, and of its parts.

Run: .venv/bin/python tests/bench/bench_metrics_scrape.py [postgres]
Builds a throwaway store (SQLite under a temp dir; ``postgres`` uses a
throwaway database on 127.0.0.1:5432 instead) with 200 SPUs in 5 racks,
100 topics x 1,000 partitions and 1,000 topics x 3 (RF 3: the cluster of
bench_pages.py) and a private Redis for the counters; takes SPU 0 offline so
the under-replicated and offline figures are not all zero; then times the
scrape through Django's test client (with the bearer token, as Prometheus
scrapes) and its parts apart. Wall time carries this shared machine's load,
CPU time much less so. Goal: median under 200 ms (issue 20). Figures, not
assertions (DESIGN.md).
"""
from __future__ import annotations

import os
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
TMP = Path(tempfile.mkdtemp(prefix="bench-metrics-"))
RACKS = ["rack-a", "rack-b", "rack-c", "rack-d", "rack-e"]
TOKEN = "bench-token"
RUNS = 15


def setup(postgres: bool) -> object:
    """Private Redis and a throwaway store, before Django reads its settings."""
    return setup_bench_store(TMP, postgres, "metrics", METRICS_TOKEN=TOKEN)


def build() -> None:
    from cluster.core.spus import SpuResolution
    from cluster.models import Partition
    from cluster.services import spu_register, topic_create
    from cluster.services.spus import spu_set_resolution

    for spu in range(200):
        spu_register(spu_id=spu, rack=RACKS[spu % len(RACKS)], by="bench")
        spu_set_resolution(spu_id=spu, resolution=SpuResolution.ONLINE, by="bench")
    for t in range(100):
        topic_create(name=f"big-{t:02d}", partitions=1000, replication=3, by="bench")
    build_small_topics(1000)
    # An outage's shape without running the engine: SPU 0 led some, left the LRS of others.
    spu_set_resolution(spu_id=0, resolution=SpuResolution.OFFLINE, by="bench")
    hit = [(pk, replicas, leader) for pk, replicas, leader in
           Partition.objects.values_list("id", "replicas", "leader")[:6000] if 0 in replicas]
    for pk, replicas, leader in hit:
        if leader == 0:
            Partition.objects.filter(pk=pk).update(leader=None)
        else:
            Partition.objects.filter(pk=pk).update(lrs=[s for s in replicas if s != 0])
    # Rows written straight to the store: counted again, as `store recount` does.
    from cluster.projections.aggregates import rebuild
    rebuild()


def build_small_topics(count: int) -> None:
    """Topics of 3 partitions, written straight to the store (1,000 topic_create calls take
    minutes): series are per topic, so many small topics weigh on the scrape too."""
    from cluster.core.replication import Resolution
    from cluster.core.topic_controller import TopicResolution
    from cluster.models import Partition, Topic

    maps = [[[(t + p + r) % 200 for r in range(3)] for p in range(3)] for t in range(count)]
    topics = Topic.objects.bulk_create(
        Topic(name=f"t-{t:04d}", partitions=3, replication_factor=3, replica_map=maps[t],
              resolution=TopicResolution.PROVISIONED.value) for t in range(count))
    Partition.objects.bulk_create(
        (Partition(topic=topic, index=p, replicas=replicas, initial_leader=replicas[0],
                   leader=replicas[0], lrs=replicas, resolution=Resolution.ONLINE.value)
         for topic, replica_map in zip(topics, maps) for p, replicas in enumerate(replica_map)),
        batch_size=2000)


def timed(label: str, call) -> None:
    call()  # warm-up: first-use imports and query plans are not scrape time
    wall, cpu = [], []
    for _ in range(RUNS):
        start, cpu_start = time.perf_counter(), time.process_time()
        call()
        wall.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - cpu_start) * 1000)
    print(f"{label:<36} best {min(wall):6.1f}  median {statistics.median(wall):6.1f}"
          f"  worst {max(wall):6.1f} ms   CPU median {statistics.median(cpu):6.1f} ms")


def main() -> None:
    postgres = sys.argv[1:] == ["postgres"]
    redis_proc = setup(postgres)
    try:
        from django.db import connection
        from django.test import Client

        from cluster.metrics import figures
        from cluster.models import Partition

        t0 = time.perf_counter()
        build()
        print(f"built 200 SPUs, 1,100 topics, {Partition.objects.count():,} partitions "
              f"in {time.perf_counter() - t0:.1f} s ({connection.vendor})")
        client = Client()
        auth = {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}
        response = client.get("/metrics", **auth)
        assert response.status_code == 200, response.status_code
        lines = response.content.count(b"\n")
        print(f"scrape: {len(response.content) / 1024:.0f} KiB, {lines:,} lines; "
              f"{RUNS} runs, load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
        timed("/metrics (Django test client)", lambda: client.get("/metrics", **auth))
        timed("  per-topic figures (kept counts)", figures.topic_figures)
        timed("  per-SPU figures (kept counts)", figures.spu_figures)
    finally:
        if postgres:
            from django.db import connection
            connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)
        redis_proc.terminate()
        redis_proc.wait(10)
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
