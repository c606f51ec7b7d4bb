"""Benchmark of the replication shell (store + Redis): 50 SPUs, 10,000 partitions, replication 3.

Prints figures; asserts nothing about time. Uses a throwaway SQLite database and
Redis database 13 of REDIS_URL (flushed), or a private Redis when none answers. Run:
    .venv/bin/python tests/bench/bench_replication_shell.py [--spus 50] [--partitions 10000]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup_throwaway_django  # noqa: E402


def timed(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t) * 1000, out


def setup_redis(workdir: Path) -> object:
    from django.conf import settings

    from webapp.redis_server import ensure_redis

    proc, url = ensure_redis(settings.REDIS_URL, workdir / "redis")
    settings.REDIS_URL = url.rsplit("/", 1)[0] + "/13"
    from cluster.adapters import hot_state

    hot_state.client().flushdb()
    return proc


def build(spus: int, partitions: int) -> None:
    from cluster.models import Spu
    from cluster.services import spu_connect, spu_register, topic_create

    for i in range(spus):
        spu_register(spu_id=i)
        spu_connect(spu_id=i)
    topic_create(name="bench", partitions=partitions, replication=3, min_lrs=2)
    assert Spu.objects.count() == spus


def figures(label: str, times: list[float]) -> None:
    print(f"{label:<44} median {statistics.median(times):7.1f} ms  "
          f"(min {min(times):.1f}, max {max(times):.1f}, {len(times)} steps) "
          f"-> {1000 / statistics.median(times):.1f} steps/s")


def bench_ticks(partitions: int, steps: int) -> int:
    from cluster.models import Topic
    from cluster.services.replication import replication_tick
    from cluster.adapters.settle import LocalQueue

    now = int(time.time() * 1000)
    ms, _ = timed(lambda: replication_tick(now=now, dispatch=LocalQueue()))
    print(f"first tick (topology sync, {partitions} replica sets created): {ms:.0f} ms")
    idle = []
    for _ in range(steps):
        now += 1000
        idle.append(timed(lambda: replication_tick(now=now, dispatch=LocalQueue()))[0])
    figures("tick, idle cluster", idle)
    # One record per partition per second, acks=1, from the simulated producer.
    Topic.objects.filter(name="bench").update(producer_rate=partitions)
    replication_tick(now=now, dispatch=LocalQueue())
    busy = []
    for _ in range(steps):
        now += 1000
        busy.append(timed(lambda: replication_tick(now=now, dispatch=LocalQueue()))[0])
    figures(f"tick, {partitions} records/s produced", busy)
    return now


def bench_failover(now: int, spu: int = 0) -> None:
    from cluster.adapters import hot_state
    from cluster.core.replication import Resolution
    from cluster.services.outages import spu_offline
    from cluster.services.replication import replication_tick
    from cluster.adapters.settle import LocalQueue

    led = [k for k, rs in hot_state.load().state.replica_sets.items() if rs.leader == spu]
    queue = LocalQueue()
    t0 = time.perf_counter()
    spu_offline(spu_id=spu, by="bench")
    t1 = time.perf_counter()
    replication_tick(now=now + 1000, dispatch=queue)
    t2 = time.perf_counter()
    notices = len(queue.notices)
    queue.drain()
    t3 = time.perf_counter()
    after = hot_state.load(led).state.replica_sets
    online = sum(after[k].resolution is Resolution.ONLINE and after[k].leader != spu for k in led)
    print(f"failover of SPU {spu}: it led {len(led)} replica sets")
    print(f"  store: SPU offline                           {1000 * (t1 - t0):7.1f} ms")
    print(f"  one tick: SpuOffline, {notices} candidate notices   {1000 * (t2 - t1):7.1f} ms")
    print(f"  candidates' responses -> leaders installed    {1000 * (t3 - t2):7.1f} ms")
    print(f"  Online with a new leader: {online}/{len(led)}, total {1000 * (t3 - t0):.0f} ms")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--spus", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--steps", type=int, default=8)
    args = ap.parse_args(argv)
    workdir = setup_throwaway_django()
    from django.conf import settings

    settings.REPLICATION_SIMULATED_PRODUCERS = True
    proc = setup_redis(workdir)
    try:
        ms, _ = timed(lambda: build(args.spus, args.partitions))
        print(f"{args.spus} SPUs, {args.partitions} partitions, replication 3 "
              f"(store built in {ms:.0f} ms)")
        now = bench_ticks(args.partitions, args.steps)
        bench_failover(now)
    finally:
        from cluster.adapters import hot_state

        hot_state.client().flushdb()
        if proc is not None:
            proc.terminate()


if __name__ == "__main__":
    main()
