"""What a tick and Redis cost as a partition's log grows, retention fixed.

One topic, one partition, replication 3, REPLICATION_LOG_RETENTION records
kept. For each LEO it appends up to that offset (values for the last
``--values`` records), lets the followers catch up, compacts, then prints the
median idle tick and the Redis memory of the partition's keys (replica set and
values hash). Bounded growth means both columns stay flat as LEO grows.
Uses a throwaway SQLite database and Redis database 13 of REDIS_URL (flushed),
or a private Redis when none answers. Run:
    .venv/bin/python tests/bench/bench_growth.py [--leos 10000 100000 1000000]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup_throwaway_django  # noqa: E402
from bench_replication_shell import setup_redis  # noqa: E402


def tick(now: int) -> tuple[float, float]:
    """Wall and CPU milliseconds of one tick (CPU time is what a loaded machine inflates least)."""
    from cluster.services.waiting import LocalQueue
    from cluster.services.replication import replication_tick

    queue = LocalQueue()
    t, cpu = time.perf_counter(), time.process_time()
    replication_tick(now=now, dispatch=queue)
    queue.drain()
    return (time.perf_counter() - t) * 1000, (time.process_time() - cpu) * 1000


def grow_to(leo: int, values: int) -> None:
    from django.conf import settings

    from cluster.adapters import hot_state
    from cluster.services.records import records_produce

    current = hot_state.load().state.replica_sets[("grow", 0)]
    missing = leo - current.replica[current.leader].leo - values
    while missing > 0:  # one request may carry PRODUCE_MAX_RECORDS at most
        count = min(missing, settings.PRODUCE_MAX_RECORDS)
        records_produce(topic="grow", acks=1, count=count)
        missing -= count
    for start in range(0, values, 1000):
        batch = [f"v{n}" for n in range(start, min(values, start + 1000))]
        records_produce(topic="grow", acks=1, values=batch)


def memory() -> tuple[int, int]:
    from cluster.adapters import hot_state, status_rows
    from cluster.engine.engine import current as engine

    found: list[int] = []

    def measure(_: object) -> list:
        client = hot_state.client()
        # The statuses: their fields and the rows over them (status_rows.py).
        found.extend([(client.memory_usage(hot_state.sets_key("grow")) or 0)
                      + (client.memory_usage(status_rows.rows_key("grow")) or 0),
                      client.memory_usage(hot_state.values_key("grow")) or 0])
        return []

    with engine().unit(keys=[]):  # inside a use case: the store's namespace, whatever it is
        measure(None)
    return found[0], found[1]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--leos", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--values", type=int, default=5_000)
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args(argv)
    workdir = setup_throwaway_django()
    from django.conf import settings

    settings.REPLICATION_SIMULATED_PRODUCERS = False
    proc = setup_redis(workdir)
    try:
        run(args, settings.REPLICATION_LOG_RETENTION)
    finally:
        from cluster.adapters import hot_state

        hot_state.client().flushdb()
        if proc is not None:
            proc.terminate()


def run(args: argparse.Namespace, retention: int) -> None:
    from cluster.services import spu_connect, spu_register, topic_create

    for spu in range(3):
        spu_register(spu_id=spu)
        spu_connect(spu_id=spu)
    topic_create(name="grow", partitions=1, replication=3)
    now = int(time.time() * 1000)
    tick(now)
    print(f"retention {retention} records; values on the last {args.values} of each LEO")
    for leo in args.leos:
        grow_to(leo, args.values)
        for _ in range(3):  # catch up, commit, compact
            now += 1000
            tick(now)
        times = []
        for _ in range(args.steps):
            now += 1000
            times.append(tick(now))
        sets, values = memory()
        wall, cpu = (statistics.median(t[i] for t in times) for i in (0, 1))
        print(f"LEO {leo:>10,}: idle tick median {wall:8.1f} ms wall, {cpu:6.1f} ms CPU; "
              f"Redis: replica set {sets / 1024:8.1f} KiB, values {values / 1024:8.1f} KiB")


if __name__ == "__main__":
    main()
