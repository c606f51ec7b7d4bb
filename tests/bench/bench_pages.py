"""Page and API speed at 100,000 partitions: server time through Django's test client.

Run: .venv/bin/python tests/bench/bench_pages.py [postgres] [--profile URL]
Builds a throwaway store (SQLite under a temp dir; ``postgres`` a throwaway
database on 127.0.0.1:5432) and a private Redis: 200 SPUs in 5 racks, one
topic of 50,000 partitions, 50 topics of 1,000 and 1,000 of 3 (RF 3, 103,000
partitions), SPU 0 offline with the partitions it led leaderless and those it
followed under-replicated. Then times every page and API list the issue names
and prints best / median / worst wall time, median CPU time, queries and size.
``--profile URL`` prints a cProfile of one more request of that URL. Goal:
every median under 300 ms (issue 22). Figures, not assertions (DESIGN.md).
"""
from __future__ import annotations

import cProfile
import os
import pstats
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
TMP = Path(tempfile.mkdtemp(prefix="bench-pages-"))
RACKS = ["rack-a", "rack-b", "rack-c", "rack-d", "rack-e"]
RUNS = 9
PAGES = [("overview", "/"), ("SPUs", "/spus/"), ("topics list", "/topics/"),
         ("topic page (50,000 partitions)", "/topics/huge/"),
         ("topic page (1,000 partitions)", "/topics/big-00/"),
         ("partitions, first page", "/partitions/"),
         ("partitions, topic of 50,000, last page", "/partitions/?topic=huge&page=500"),
         ("partitions, under-replicated", "/partitions/?under_replicated=1"),
         ("heatmaps", "/heatmaps/"),
         ("API topics (limit 50)", "/api/topics/?limit=50"),
         ("API topic huge", "/api/topics/huge/"),
         ("API SPUs", "/api/spus/"), ("API cluster", "/api/cluster/"),
         ("API partitions", "/api/partitions/"),
         ("API partitions, topic of 50,000, last", "/api/partitions/?topic=huge&offset=49900"),
         ("/metrics", "/metrics")]


def setup(postgres: bool) -> object:
    """Private Redis and a throwaway store, before Django reads its settings.

    BENCH_PAGES_DB: a SQLite file kept between runs (built once; for profiling rounds)."""
    kept = os.environ.get("BENCH_PAGES_DB")
    return setup_bench_store(TMP, postgres, "pages", Path(kept) if kept else None,
                             METRICS_TOKEN="bench-token")


def build() -> None:
    from cluster.core.spus import SpuResolution
    from cluster.services import spu_register, topic_create
    from cluster.services.spus import spu_set_resolution

    for spu in range(200):
        spu_register(spu_id=spu, rack=RACKS[spu % len(RACKS)], by="bench")
        spu_set_resolution(spu_id=spu, resolution=SpuResolution.ONLINE, by="bench")
    topic_create(name="huge", partitions=50_000, replication=3, by="bench")
    for t in range(50):
        topic_create(name=f"big-{t:02d}", partitions=1000, replication=3, by="bench")
    sys.path.insert(0, str(ROOT / "tests" / "bench"))
    from bench_metrics_scrape import build_small_topics

    build_small_topics(1000)
    degrade_spu_zero()


def degrade_spu_zero() -> None:
    """An outage's shape without running the engine: SPU 0 offline, its partitions hit."""
    from cluster.core.spus import SpuResolution
    from cluster.models import Partition
    from cluster.services.spus import spu_set_resolution

    spu_set_resolution(spu_id=0, resolution=SpuResolution.OFFLINE, by="bench")
    hit = [(pk, replicas, leader) for pk, replicas, leader in
           Partition.objects.values_list("id", "replicas", "leader") if 0 in replicas]
    for pk, replicas, leader in hit:
        if leader == 0:
            Partition.objects.filter(pk=pk).update(leader=None)
        else:
            Partition.objects.filter(pk=pk).update(lrs=[s for s in replicas if s != 0])
    rebuild = _rebuild_aggregates()
    if rebuild is not None:
        rebuild()  # rows written behind the projection's back, as the reconcile beat heals


def _rebuild_aggregates():
    try:
        from cluster.projections.aggregates import rebuild
    except ImportError:  # before issue 22's aggregates
        return None
    return rebuild


def client():
    from django.contrib.auth import get_user_model
    from django.test import Client

    from cluster.roles import make_operator

    user, _ = get_user_model().objects.get_or_create(username="bench")
    make_operator(user)
    c = Client()
    c.force_login(user)
    return c


def measure(c, label: str, url: str) -> float:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    auth = {"HTTP_AUTHORIZATION": "Bearer bench-token"} if url == "/metrics" else {}
    c.get(url, **auth)  # warm-up: template compilation and first-use imports are not page time
    wall, cpu, queries = [], [], 0
    for _ in range(RUNS):
        with CaptureQueriesContext(connection) as ctx:
            start, cpu_start = time.perf_counter(), time.process_time()
            response = c.get(url, **auth)
            wall.append((time.perf_counter() - start) * 1000)
            cpu.append((time.process_time() - cpu_start) * 1000)
        queries = len(ctx.captured_queries)
        assert response.status_code == 200, (url, response.status_code)
    median = statistics.median(wall)
    print(f"{label:<40} best {min(wall):6.1f}  median {median:6.1f}  worst {max(wall):6.1f} ms"
          f"  CPU {statistics.median(cpu):6.1f} ms  {queries:2d} q  "
          f"{len(response.content) / 1024:5.0f} KiB", flush=True)
    return median


def profile(c, url: str) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    c.get(url)
    profiler.disable()
    stats = pstats.Stats(profiler).sort_stats(os.environ.get("BENCH_PAGES_SORT", "cumulative"))
    stats.print_stats(25)
    if os.environ.get("BENCH_PAGES_CALLERS"):  # who calls a function the profile names
        stats.print_callers(os.environ["BENCH_PAGES_CALLERS"])


def main() -> None:
    args = sys.argv[1:]
    postgres = "postgres" in args
    redis_proc = setup(postgres)
    try:
        from django.db import connection

        from cluster.models import Partition

        t0 = time.perf_counter()
        if not Partition.objects.exists():
            build()
        print(f"built 200 SPUs, 1,051 topics, {Partition.objects.count():,} partitions in "
              f"{time.perf_counter() - t0:.1f} s ({connection.vendor})")
        c = client()
        print(f"{'page':<40} ({RUNS} runs, Django test client; load average "
              f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
        only = os.environ.get("BENCH_PAGES_ONLY", "")
        medians = [measure(c, label, url) for label, url in PAGES if only in url]
        print(f"slowest median {max(medians):.1f} ms; load average {os.getloadavg()[0]:.1f}")
        if "--profile" in args:
            profile(c, args[args.index("--profile") + 1])
    finally:
        if postgres:
            from django.db import connection
            connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)
        redis_proc.terminate()
        redis_proc.wait(10)
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
