"""Benchmark: reading records by offset, near the start and ten million offsets in.

Prints figures; asserts nothing about time. Uses a throwaway SQLite database and
a private Redis of its own. Run:
    .venv/bin/python tests/bench/bench_records.py
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup_throwaway_django  # noqa: E402

DEEP = 10_000_000
RUNS = 9


def build() -> None:
    """One partition whose first ten million offsets were compacted, 10,000 retained."""
    from cluster.adapters import hot_state
    from cluster.services.waiting import wait_replicated
    from cluster.services import spu_connect, spu_register, topic_create

    spu_register(spu_id=0)
    spu_connect(spu_id=0)
    topic_create(name="shallow", partitions=1, replication=1)
    topic_create(name="deep", partitions=1, replication=1)
    wait_replicated("shallow") and wait_replicated("deep")
    with hot_state.locked() as held:  # a save names the leases it is fenced by
        hot = hot_state.load()
        for name, prefix in (("shallow", 0), ("deep", DEEP)):
            rs, first = hot.state.replica_sets[(name, 0)], hot.state.next_record_id
            rs.replica[0].start, rs.replica[0].log = prefix, list(range(first, first + 10_000))
            hot.state.next_record_id = first + 10_000
            rs.hw = rs.replica[0].hw = prefix + 10_000
        hot_state.save(hot, held, retain=10_000)


def measure(label: str, topic: str, offset: int) -> None:
    from cluster.services.records import records_consume

    records_consume(topic=topic, offset=offset, max_records=100)  # warm-up
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        records = records_consume(topic=topic, offset=offset, max_records=100)
        times.append((time.perf_counter() - start) * 1000)
    assert len(records) == 100
    print(f"{label:<40} best {min(times):7.2f}  median {statistics.median(times):7.2f} ms")


def main() -> None:
    workdir = setup_throwaway_django()
    from django.conf import settings

    from webapp.redis_server import start_private_redis

    proc, settings.REDIS_URL = start_private_redis(workdir / "redis")
    try:
        build()
        print(f"100 records per read, {RUNS} runs (records_consume, private Redis)")
        measure("offset 10", "shallow", 10)
        measure(f"offset {DEEP + 10:,}", "deep", DEEP + 10)
    finally:
        proc.terminate()
        proc.wait(5)


if __name__ == "__main__":
    main()
