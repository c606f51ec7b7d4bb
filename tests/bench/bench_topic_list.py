"""``GET /api/topics/`` at 100,000 partitions: bytes and server time of a page (issue 36 item 4).

Run: .venv/bin/python tests/bench/bench_topic_list.py [topics] [partitions_each]
Builds a throwaway SQLite store with 200 SPUs and ``topics`` topics (default 20) of
``partitions_each`` partitions (default 5,000; RF 3), then asks for the first page of
``/api/topics/`` (the default, 100 topics), the same with ``?fields=name,partitions``
and one topic's detail, 5 times each, and prints the body size and the best and median
wall time. Figures, not assertions (DESIGN.md).
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup_throwaway_django  # noqa: E402


def main() -> None:
    topics = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    each = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    setup_throwaway_django()
    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient

    from cluster.models import Spu
    from cluster.services import topic_create

    Spu.objects.bulk_create([Spu(id=i, rack=f"r{i % 5}") for i in range(200)])
    for t in range(topics):
        topic_create(name=f"t{t:03d}", partitions=each, replication=3)
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_superuser("bench", "", "x"))
    print(f"{topics} topics x {each:,} partitions")
    print(f"{'request':<40}{'bytes':>12}{'best s':>9}{'median s':>10}")
    for url in ("/api/topics/", "/api/topics/?fields=name,partitions", "/api/topics/t000/"):
        times, size = [], 0
        for _ in range(5):
            start = time.perf_counter()
            response = client.get(url)
            times.append(time.perf_counter() - start)
            size = len(response.content)
            assert response.status_code == 200, response.content[:300]
        print(f"{url:<40}{size:>12,}{min(times):>9.3f}{statistics.median(times):>10.3f}")


if __name__ == "__main__":
    main()
