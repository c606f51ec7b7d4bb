"""Benchmark: carrying out a plan of 1,000 moves on a 10,000-partition cluster.

50 SPUs hold 10,000 partitions (replication 3, min LRS 2, a simulated producer
writing 1,000 records/s); 10 new SPUs join and a stored plan moves the last
replica of 1,000 partitions onto them (synthesised: the planner would move
~5,000 to balance 60 SPUs). The plan runs with the default throttle (5 moves
per SPU, 50 in total) through the real path: ``plan_apply``, then replication
ticks in this process, each running the executor (as a worker's beat would).
Prints wall time, moves/s and the tick rate while it runs; asserts nothing
about time. Uses a throwaway SQLite database and a private Redis (a shared one
may be flushed by another benchmark mid-run, which loses the hot state).
``--live`` turns live updates on (channel layer on that Redis) and also prints
how many plan.progress messages the plan's page was offered and sent. Run:
    .venv/bin/python tests/bench/bench_plan_apply.py [--partitions 10000] [--moves 1000] [--live]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup_throwaway_django  # noqa: E402
from bench_replication_shell import build, timed  # noqa: E402

NEW_SPUS = 10


def add_spus(first: int, count: int) -> list[int]:
    from cluster.services import spu_connect, spu_register

    ids = list(range(first, first + count))
    for i in ids:
        spu_register(spu_id=i)
        spu_connect(spu_id=i)
    return ids


def store_plan(moves: int, new: list[int]) -> int:
    """A plan moving each of the first ``moves`` partitions' last replica to a new SPU."""
    from cluster.models import Topic
    from planner.models import Plan

    replica_map = Topic.objects.get(name="bench").replica_map
    rows = []
    for p in range(moves):
        before = replica_map[p]
        after = before[:-1] + [new[p % len(new)]]
        rows.append({"topic": "bench", "partition": p, "before": before, "after": after,
                     "added": [after[-1]], "removed": [before[-1]], "leader_change": False})
    current = {"spus": [], "topics": [{"name": "bench", "sizes": None, "partitions": [
        {"id": p, "replicas": r} for p, r in enumerate(replica_map)]}]}
    plan = Plan.objects.create(created_by="bench", name="bench scale-out", scenario={},
                               options={}, metrics={}, moves=rows, current=current)
    return plan.pk


def tick(now: int) -> float:
    from cluster.services.replication import replication_tick
    from cluster.services.waiting import LocalQueue

    queue = LocalQueue()
    ms, _ = timed(lambda: replication_tick(now=now, dispatch=queue))
    queue.drain()
    return ms


def time_the_executor() -> list[float]:
    """Wrap the engine's executor step so each call's milliseconds are kept."""
    from cluster.engine import engine

    spent: list[float] = []
    built = engine.current()
    engine.start(built.replaced(tick_steps=tuple(_timed_step(step, spent)
                                                 for step in built.tick_steps)))
    return spent


def _timed_step(step, spent: list[float]):
    def timed_step(hot, at):
        ms, actions = timed(lambda: step(hot, at))
        spent.append(ms)
        return actions
    return timed_step


def run_plan(plan_id: int, now: int, limit: int) -> tuple[float, list[float]]:
    from planner.execution import plan_apply, plan_finished

    started = time.perf_counter()
    plan_apply(plan_id=plan_id, by="bench")
    ticks = []
    while not plan_finished(plan_id) and len(ticks) < limit:
        now += 1000
        ticks.append(tick(now))
    return time.perf_counter() - started, ticks


def rate(label: str, times: list[float]) -> None:
    med = statistics.median(times)
    print(f"{label:<40} median {med:7.1f} ms (max {max(times):.1f}, {len(times)} ticks) "
          f"-> {1000 / med:.2f} ticks/s")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--spus", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--moves", type=int, default=1_000)
    ap.add_argument("--max-ticks", type=int, default=2_000)
    ap.add_argument("--live", action="store_true", help="live updates on (plan.progress)")
    args = ap.parse_args(argv)
    workdir = setup_throwaway_django()
    from django.conf import settings

    settings.REPLICATION_SIMULATED_PRODUCERS = True
    settings.LIVE_UPDATES = False
    from webapp.redis_server import start_private_redis

    proc, settings.REDIS_URL = start_private_redis(workdir / "redis")
    if args.live:
        settings.LIVE_UPDATES = True
        settings.CHANNEL_LAYERS = {"default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [{"address": settings.REDIS_URL,
                                  **settings.CHANNEL_LAYER_HOST}]}}}
    try:
        bench(args)
    finally:
        from cluster.adapters import hot_state

        hot_state.client().flushdb()
        if proc is not None:
            proc.terminate()


def bench(args: argparse.Namespace) -> None:
    from cluster.services.records import topic_set_producer_rate
    from planner.execution import plan_status

    build(args.spus, args.partitions)
    topic_set_producer_rate(name="bench", rate=1000)
    now = int(time.time() * 1000)
    idle = [tick(now := now + 1000) for _ in range(6)][1:]
    new = add_spus(args.spus, NEW_SPUS)
    plan_id = store_plan(args.moves, new)
    idle += [tick(now := now + 1000) for _ in range(3)]
    print(f"{args.spus} SPUs + {NEW_SPUS} new, {args.partitions} partitions, replication 3; "
          f"plan of {args.moves} moves, throttle {settings_caps()}")
    rate("tick before the plan", idle)
    spent = time_the_executor()
    counts = count_progress()
    wall, ticks = run_plan(plan_id, now, args.max_ticks)
    status = plan_status(plan_id=plan_id)
    print(f"plan {status['state']}: {status['moves_done']}/{status['moves_total']} moves "
          f"in {wall:.1f} s wall, {len(ticks)} ticks -> {status['moves_done'] / wall:.1f} moves/s")
    if status["reason"]:
        print(f"  {status['moves_failed']} moves failed; first: {status['reason']}")
    print(f"bytes moved {status['bytes_moved']:,} "
          f"(records x new replicas x REPLICATION_RECORD_BYTES)")
    rate("tick while the plan runs", ticks)
    print(f"executor step inside the tick: median {statistics.median(spent):.1f} ms, "
          f"max {max(spent):.1f} ms")
    if settings_live():
        from planner.live import apply_progress_idle
        deadline = time.monotonic() + 5
        while not apply_progress_idle() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)
        print(f"plan.progress: {counts['offered']} offered by the executor, {counts['sent']} "
              f"sent to the plan's page over {wall:.1f} s (coalesced to one per 100 ms at most); "
              f"building one message: median {statistics.median(counts['build_ms'] or [0]):.1f}"
              f" ms off the tick's thread")


def settings_live() -> bool:
    from django.conf import settings

    return settings.LIVE_UPDATES


def count_progress() -> dict:
    """Count offers and sends of plan.progress, and time each message's build."""
    from planner import live

    counts: dict = {"offered": 0, "sent": 0, "build_ms": []}
    offer, send = live._progress.offer, live._progress.send

    def counted_offer(group, build):
        if not group.startswith("plan-"):
            return offer(group, build)  # the cluster group's counts, cheap to build
        counts["offered"] += 1

        def timed_build():
            ms, payload = timed(build)
            counts["build_ms"].append(ms)
            return payload
        offer(group, timed_build)

    def counted_send(group, payload):
        counts["sent"] += group.startswith("plan-")
        send(group, payload)

    live._progress.offer, live._progress.send = counted_offer, counted_send
    return counts


def settings_caps() -> str:
    from django.conf import settings

    return f"{settings.PLAN_MAX_MOVES_PER_SPU}/SPU, {settings.PLAN_MAX_MOVES} total"


if __name__ == "__main__":
    main()
