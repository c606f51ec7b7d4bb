"""Page speed on big clusters: server time through Django's test client.

Run: .venv/bin/python tests/bench/bench_pages.py [huge]
Builds a throwaway SQLite store under a temp dir (never touches var/), fills
it through the services, then times each page a few times and prints the
median and worst. Targets: topics list (1,000 topics) and heatmaps (200 SPUs,
50,000 partitions) under 300 ms; a /metrics scrape at 100,000 partitions
under 200 ms; a page of 100 partitions (API and page) under 100 ms with one
100,000-partition topic (``huge`` runs only that case). Figures, not
assertions (DESIGN.md).
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
TMP = tempfile.mkdtemp(prefix="bench-pages-")
os.environ["VAR_DIR"] = TMP
os.environ.pop("DATABASE_URL", None)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext  # noqa: E402

RACKS = ["rack-a", "rack-b", "rack-c", "rack-d", "rack-e"]
RUNS = 9


def build_big_cluster() -> None:
    """200 SPUs in 5 racks, all online; 50 topics x 1,000 partitions, RF 3."""
    from cluster.models import Spu
    from cluster.services import spu_register, topic_create
    from cluster.services.spus import spu_set_resolution
    from cluster.core.spus import SpuResolution

    for spu_id in range(200):
        spu_register(spu_id=spu_id, rack=RACKS[spu_id % len(RACKS)], by="bench")
    for spu_id in Spu.objects.values_list("id", flat=True):
        spu_set_resolution(spu_id=spu_id, resolution=SpuResolution.ONLINE, by="bench")
    for t in range(50):
        topic_create(name=f"big-{t:02d}", partitions=1000, replication=3, by="bench")


def build_huge_topic() -> None:
    """One topic of 100,000 partitions (the most a topic may have), RF 3."""
    from cluster.models import Spu
    from cluster.services import spu_register, topic_create

    for spu_id in range(Spu.objects.count(), 200):
        spu_register(spu_id=spu_id, rack=RACKS[spu_id % len(RACKS)], by="bench")
    topic_create(name="huge", partitions=100_000, replication=3, by="bench")


def measure_huge(c: Client) -> None:
    t0 = time.perf_counter()
    build_huge_topic()
    print(f"built one topic of 100,000 partitions in {time.perf_counter() - t0:.1f} s")
    measure(c, "API partitions, topic of 100,000, first 100", "/api/partitions/?topic=huge")
    measure(c, "API partitions, topic of 100,000, last 100",
            "/api/partitions/?topic=huge&offset=99900")
    measure(c, "API partitions, all topics, first 100", "/api/partitions/")
    measure(c, "API partitions, topic of 100,000, limit 1000",
            "/api/partitions/?topic=huge&limit=1000")
    measure(c, "partitions page, topic of 100,000, first 100", "/partitions/?topic=huge")
    measure(c, "partitions page, topic of 100,000, last 100",
            "/partitions/?topic=huge&page=1000")
    measure(c, "partitions page, all topics, first 100", "/partitions/")


def build_many_topics() -> None:
    """1,000 more topics of 3 partitions each (the topic list benchmark)."""
    from cluster.services import topic_create

    for t in range(1000):
        topic_create(name=f"t-{t:04d}", partitions=3, replication=3, by="bench")


def build_more_partitions() -> None:
    """50 more topics x 1,000 partitions: 100,000 in the big topics for the scrape."""
    from cluster.services import topic_create

    for t in range(50, 100):
        topic_create(name=f"big-{t:02d}", partitions=1000, replication=3, by="bench")


def client() -> Client:
    from django.contrib.auth import get_user_model
    from cluster.roles import make_operator

    user, _ = get_user_model().objects.get_or_create(username="bench")
    make_operator(user)
    c = Client()
    c.force_login(user)
    return c


def measure(c: Client, label: str, url: str) -> None:
    c.get(url)  # warm-up: template compilation and first-use imports are not page time
    times, queries = [], 0
    for _ in range(RUNS):
        with CaptureQueriesContext(connection) as ctx:
            start = time.perf_counter()
            response = c.get(url)
            times.append((time.perf_counter() - start) * 1000)
        queries = len(ctx.captured_queries)
        assert response.status_code == 200, (url, response.status_code)
    size = len(response.content) / 1024
    # best = the page's own cost; median and worst also carry this shared machine's load.
    print(f"{label:<44} best {min(times):6.1f}  median {statistics.median(times):6.1f}"
          f"  worst {max(times):6.1f} ms  {queries:2d} queries  {size:5.0f} KiB")


def main() -> None:
    call_command("migrate", "--noinput", verbosity=0)
    if sys.argv[1:] == ["huge"]:
        measure_huge(client())
        return
    t0 = time.perf_counter()
    build_big_cluster()
    print(f"built 200 SPUs, 50 topics, 50,000 partitions in {time.perf_counter() - t0:.1f} s")
    c = client()
    print(f"{'page':<44} (server time, {RUNS} runs, Django test client, SQLite; "
          f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    measure(c, "heatmaps (200 SPUs, 50,000 partitions)", "/heatmaps/")
    measure(c, "overview (200 SPUs, 50,000 partitions)", "/")
    measure(c, "SPUs (200 SPUs, 50,000 partitions)", "/spus/")
    measure(c, "partitions, first page of 50,000", "/partitions/")
    measure(c, "partitions, under-replicated filter", "/partitions/?under_replicated=1")
    measure(c, "topic detail (1,000 partitions)", "/topics/big-00/")
    measure(c, "API partitions (limit 100)", "/api/partitions/")
    t0 = time.perf_counter()
    build_many_topics()
    print(f"built 1,000 more topics in {time.perf_counter() - t0:.1f} s")
    measure(c, "topics list (1,050 topics, all on one page)", "/topics/?per_page=all")
    measure(c, "topics list, first page", "/topics/")
    measure(c, "topics list, search 't-09'", "/topics/?q=t-09")
    measure(c, "API topics (limit 100)", "/api/topics/")
    t0 = time.perf_counter()
    build_more_partitions()
    print(f"built 50 more topics (103,000 partitions in all) in {time.perf_counter() - t0:.1f} s")
    # Redis at REDIS_URL (if any) adds the counters; without one the store figures are all.
    measure(c, "/metrics scrape (200 SPUs, 103,000 partitions)", "/metrics")
    measure_huge(c)


if __name__ == "__main__":
    main()
