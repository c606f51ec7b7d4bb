"""Benchmark: the engine's periodic tasks (beat's schedule besides the tick) at a size.

A worker that runs one of them is not stepping its shards meanwhile, so at a few hundred
thousand partitions they decide whether a sharded engine holds 1 step/s. For N
partitions (topics of at most 100,000, replication 3 on 50 SPUs, the simulated producers
on), after the first whole tick and a few shard ticks, each task runs in this process as a
worker runs it (``task.apply()``), ``--repeat`` times; the figures are wall and CPU per
run. Real private Redis, throwaway SQLite (``--postgres``: PostgreSQL). Prints figures,
asserts nothing; ``--profile NAME`` adds cProfile's top 25 for that task; ``--added P``
then times the coordinator's tick that adopts a new topic of P partitions;
``--spu-changes N`` then takes SPUs 0..N-1 offline and back online one at a time and times
the coordinator's tick that adopts each change and the shards' two steps after it;
``--plan-ticks N`` then plans the drain of the last SPU, applies it, and times N ticks while
it runs: the coordinator's tick (sharded, a whole tick every tick before round 29; the
step's own sets under every lease since) and the shards' steps after it;
``--redis-restarts N`` then restarts the hot state's Redis from its file N times and
times the coordinator's tick after each and the shards' steps (the first of ``--hot-redis
N``'s servers, when the hot state is on servers of its own);
``--web-produces N`` then produces one record as the web does N times and times the
shards' two steps after each; ``--outage-between`` takes an SPU offline and steps before
each run but the first, so that each finds the metadata log moved;
``--checkpoint-between`` steps with a HW checkpoint instead (the log moved, no partition's status).

    .venv/bin/python tests/bench/bench_periodic_tasks.py [--partitions 100000] [--shards 4]
        [--repeat 3] [--only healing_check,...] [--profile healing_check]
        [--added 1000 [--made-again]] [--spu-changes 3] [--plan-ticks 10]
        [--redis-restarts 2] [--web-produces 3] [--hot-redis 2]
        [--outage-between | --checkpoint-between] [--json]
"""
from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))

SPUS = 50


def tasks() -> dict[str, object]:
    from cluster import tasks as cluster_tasks
    from healing import tasks as healing_tasks
    from history import tasks as history_tasks

    return {"healing_check": healing_tasks.healing_check,
            "leader_rebalance_check": cluster_tasks.leader_rebalance_check,
            "reconcile_topics": cluster_tasks.reconcile_topics,
            "history_snapshot": history_tasks.history_snapshot}


def timed(task: object, repeat: int, between: object = None
          ) -> tuple[list[float], list[float]]:
    walls, cpus = [], []
    for run in range(repeat):
        if run and between is not None:
            between(run)  # type: ignore[operator]
        wall, cpu = time.perf_counter(), time.process_time()
        task.apply().get()  # type: ignore[attr-defined]
        walls.append((time.perf_counter() - wall) * 1000)
        cpus.append((time.process_time() - cpu) * 1000)
    return walls, cpus


def step_all() -> None:
    """A coordinator tick and every shard's, as the workers run them."""
    from cluster.services import replication

    work = replication.replication_coordinate()
    for shard, quotas in (work or {}).items():
        replication.replication_shard_tick(shard, quotas=quotas)


def spu_offline_and_step(run: int) -> None:
    """SPU ``run`` taken offline (the one before back online) and the engine stepped until
    the store applied the elections: the metadata log moved by an outage's entries."""
    from cluster.ports import applied_offset, log_head
    from cluster.services.outages import spu_offline, spu_online

    if run > 1:
        spu_online(spu_id=run - 1, by="bench")
    spu_offline(spu_id=run, by="bench")
    for _ in range(3):
        step_all()
    if applied_offset() < log_head():
        from cluster.ports import catch_up_store
        catch_up_store()


_APPLIED: list[int] = []


def plan_steps_between(_run: int) -> None:
    """The drain of the last SPU applied (once), then five ticks of it: what the log and the
    rows moved by between two healing checks (every 5 s) while a plan runs."""
    if not _APPLIED:
        from planner.drain import plan_drain
        from planner.execution import plan_apply

        plan = plan_drain(spu_id=SPUS - 1, by="bench")
        plan_apply(plan_id=plan.pk, by="bench")
        _APPLIED.append(plan.pk)
    for _ in range(5):
        step_all()


def log_moved_and_step(_run: int) -> None:
    """A HW checkpoint appended (what moves a steady engine's log every few seconds), then
    the engine stepped: the metadata log moved by entries that name no partition's
    status."""
    from django.test.utils import override_settings

    with override_settings(HISTORY_HW_INTERVAL_S=0):  # a checkpoint at the next unit
        step_all()
    step_all()


def time_topic_added(partitions: int) -> dict[str, float]:
    """Create a topic of ``partitions`` and time the coordinator's tick that adopts it."""
    from cluster.services import replication, topic_create

    topic_create(name="added", partitions=partitions, replication=3, min_lrs=2)
    wall, cpu = time.perf_counter(), time.process_time()
    work = replication.replication_coordinate()
    out = {"wall_ms": round((time.perf_counter() - wall) * 1000, 1),
           "cpu_ms": round((time.process_time() - cpu) * 1000, 1)}
    print(f"  a topic of {partitions:,} added: the coordinator's tick took {out['wall_ms']:.0f}"
          f" ms ({out['cpu_ms']:.0f} ms CPU){'' if work is None else ', and found it quiet'}",
          flush=True)
    return out


def time_made_again(partitions: int) -> dict[str, object]:
    """Delete the topic ``--added`` made and create it again under its name, then time the
    coordinator's ticks until the engine replicates it again: which each ran (a whole tick
    before round 31; dropped by one unit alone and made by the next since), then the
    shards' step after them."""
    from cluster.adapters import hot_state
    from cluster.services import replication, topic_create, topic_delete

    topic_delete(name="added")
    topic_create(name="added", partitions=partitions, replication=3, min_lrs=2)
    ticks: list[dict[str, object]] = []
    while True:
        wall, cpu = time.perf_counter(), time.process_time()
        done = replication.coordinate()
        ticks.append({"ran": done.ran.value,
                      "wall_ms": round((time.perf_counter() - wall) * 1000, 1),
                      "cpu_ms": round((time.process_time() - cpu) * 1000, 1)})
        if "added" in hot_state.replicated_topics() or len(ticks) == 5:
            break
    for shard, quotas in ({} if done.quotas is None else done.quotas).items():
        replication.replication_shard_tick(shard, quotas=quotas)
    wall = time.perf_counter()
    step_all()
    out = {"ticks": ticks, "next_step_ms": round((time.perf_counter() - wall) * 1000, 1)}
    print(f"  the topic of {partitions:,} made again: coordinator ticks "
          + ", ".join(f"{t['ran']} {t['wall_ms']:.0f} ms ({t['cpu_ms']:.0f} ms CPU)"
                      for t in ticks)
          + f"; the step after {out['next_step_ms']:.0f} ms", flush=True)
    return out


def time_spu_changes(count: int, profile: bool = False) -> list[dict[str, float]]:
    """SPU 0, 1, ... taken offline and back online, each change timed: the coordinator's tick
    that adopts it (a whole tick before round 28, the SPU's sets alone since), then the step
    of every shard after it, and the one after that; ``profile``: the shards' two steps after
    the last SPU went offline profiled (``--profile spu_step``)."""
    from cluster.services import replication
    from cluster.services.outages import spu_offline, spu_online

    out = []
    for spu in range(count):
        row: dict[str, float] = {"spu": spu}
        for change, name in ((spu_offline, "offline"), (spu_online, "online")):
            change(spu_id=spu, by="bench")
            wall, cpu = time.perf_counter(), time.process_time()
            work = replication.replication_coordinate()
            row[f"{name}_coordinator_ms"] = round((time.perf_counter() - wall) * 1000, 1)
            row[f"{name}_coordinator_cpu_ms"] = round((time.process_time() - cpu) * 1000, 1)
            for step in ("next_step_ms", "step_after_ms"):
                wall = time.perf_counter()
                if profile and (spu, name) == (count - 1, "offline"):
                    print(f"  profile: SPU {spu} offline, the shards' {step[:-3]}", flush=True)
                    profiled(step_all)
                else:
                    step_all()
                row[f"{name}_{step}"] = round((time.perf_counter() - wall) * 1000, 1)
            print(f"  SPU {spu} {name}: the coordinator's tick {row[f'{name}_coordinator_ms']:.0f}"
                  f" ms ({row[f'{name}_coordinator_cpu_ms']:.0f} ms CPU"
                  f"{', found it quiet' if work is not None else ''}); the shards' next step "
                  f"{row[f'{name}_next_step_ms']:.0f} ms, the one after "
                  f"{row[f'{name}_step_after_ms']:.0f} ms", flush=True)
        out.append(row)
    return out


def time_redis_restarts(count: int, server: list, data: Path) -> list[dict[str, object]]:
    """The hot state's Redis stopped and started again from its append-only file ``count``
    times (``server`` holds its process), each followed by the coordinator's tick, timed with
    what it ran (a whole tick before round 32; the quiet tick, which checks the new run, when
    the log came back whole since), then the shards' steps in that tick and the next step."""
    import os

    from cluster.services import replication
    from webapp.redis_server import start_private_redis

    out: list[dict[str, object]] = []
    for _ in range(count):
        os.killpg(server[0].pid, signal.SIGTERM)
        server[0].wait(120)
        server[0], _url = start_private_redis(data, int((data / "port").read_text()))
        wall, cpu = time.perf_counter(), time.process_time()
        done = replication.coordinate()
        row: dict[str, object] = {
            "ran": done.ran.value,
            "coordinator_ms": round((time.perf_counter() - wall) * 1000, 1),
            "coordinator_cpu_ms": round((time.process_time() - cpu) * 1000, 1)}
        wall = time.perf_counter()
        for shard, quotas in (done.quotas or {}).items():
            replication.replication_shard_tick(shard, quotas=quotas)
        row["shards_ms"] = round((time.perf_counter() - wall) * 1000, 1)
        wall = time.perf_counter()
        step_all()
        row["next_step_ms"] = round((time.perf_counter() - wall) * 1000, 1)
        out.append(row)
        print(f"  Redis restarted: the coordinator's tick ran {row['ran']} in "
              f"{row['coordinator_ms']:.0f} ms ({row['coordinator_cpu_ms']:.0f} ms CPU), the "
              f"shards' steps then {row['shards_ms']:.0f} ms; the next step "
              f"{row['next_step_ms']:.0f} ms", flush=True)
    return out


def time_web_produces(count: int) -> list[dict[str, float]]:
    """``count`` times: one record produced as the web does it (acks=1, its own unit of work
    under the partition's shard lease), then the shards' next step timed, and the one
    after: what a step behind another process's one-set write costs."""
    from cluster.adapters import hot_state
    from cluster.services.records import records_produce
    from cluster.services.waiting import LocalQueue

    topic = sorted(hot_state.replicated_topics())[0]
    out: list[dict[str, float]] = []
    for n in range(count):
        queue = LocalQueue()
        records_produce(topic=topic, partition=n, acks=1, count=1, dispatch=queue)
        queue.drain()
        row: dict[str, float] = {}
        for step in ("next_step_ms", "step_after_ms"):
            wall = time.perf_counter()
            step_all()
            row[step] = round((time.perf_counter() - wall) * 1000, 1)
        out.append(row)
        print(f"  a record produced from the web: the shards' next step "
              f"{row['next_step_ms']:.0f} ms, the one after {row['step_after_ms']:.0f} ms",
              flush=True)
    return out


def profiled(run: Callable[[], object]) -> None:
    """``run`` under cProfile, its top 40 by cumulative and by own time printed."""
    profile = cProfile.Profile()
    profile.runcall(run)
    for order in ("cumulative", "tottime"):
        pstats.Stats(profile).sort_stats(order).print_stats(40)


def time_plan_ticks(count: int, profile: bool = False) -> dict[str, object]:
    """The drain of the last SPU planned and applied, then ``count`` ticks timed while it
    runs: the coordinator's (with the plan's step) and every shard's step after it;
    ``profile``: the last coordinator's tick profiled (``--profile plan_coordinator``)."""
    from cluster.services import replication
    from planner.drain import plan_drain
    from planner.execution import plan_apply
    from planner.models import PlanExecution

    wall = time.perf_counter()
    plan = plan_drain(spu_id=SPUS - 1, by="bench")
    plan_apply(plan_id=plan.pk, by="bench")
    planned_ms = round((time.perf_counter() - wall) * 1000, 1)
    print(f"  the drain of SPU {SPUS - 1}: {len(plan.moves):,} moves, planned and applied in "
          f"{planned_ms:.0f} ms", flush=True)
    ticks = []
    for n in range(count):
        profiler = cProfile.Profile() if profile and n == count - 1 else None
        wall, cpu = time.perf_counter(), time.process_time()
        work = (replication.replication_coordinate() if profiler is None
                else profiler.runcall(replication.replication_coordinate))
        row: dict[str, object] = {
            "coordinator_ms": round((time.perf_counter() - wall) * 1000, 1),
            "coordinator_cpu_ms": round((time.process_time() - cpu) * 1000, 1),
            "ran_shards": work is not None}
        wall = time.perf_counter()
        for shard, quotas in (work or {}).items():
            replication.replication_shard_tick(shard, quotas=quotas)
        row["shards_ms"] = round((time.perf_counter() - wall) * 1000, 1)
        e = PlanExecution.objects.get(plan_id=plan.pk)
        row.update(moves_done=e.moves_done, in_flight=len(e.in_flight))
        ticks.append(row)
        if profiler is not None:
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
        print(f"  a tick with the plan running: coordinator {row['coordinator_ms']:.0f} ms "
              f"({row['coordinator_cpu_ms']:.0f} ms CPU), "
              + (f"then the shards' steps {row['shards_ms']:.0f} ms" if work is not None
                 else "a whole tick (no shard step)")
              + f"; moves done {e.moves_done}, in flight {len(e.in_flight)}", flush=True)
    return {"moves": len(plan.moves), "planned_ms": planned_ms, "ticks": ticks}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", default="",
                        help="a task's name, plan_coordinator (the last of --plan-ticks) or "
                             "spu_step (the shards' two steps after the last SPU went offline)")
    parser.add_argument("--only", default="", help="comma-separated task names to run")
    parser.add_argument("--postgres", action="store_true")
    parser.add_argument("--added", type=int, default=0,
                        help="then create a topic of this many partitions and time the "
                             "coordinator's next tick, which adopts it")
    parser.add_argument("--made-again", action="store_true",
                        help="then delete the --added topic and create it again, timing the "
                             "coordinator's ticks until it is replicated again")
    parser.add_argument("--spu-changes", type=int, default=0,
                        help="then take SPUs 0..N-1 offline and back online one at a time, "
                             "timing the coordinator's tick that adopts each change and the "
                             "shards' steps after it (--only none: no task first)")
    parser.add_argument("--plan-ticks", type=int, default=0,
                        help="then plan and apply the drain of the last SPU and time this "
                             "many ticks while it runs (--only none: no task first)")
    parser.add_argument("--outage-between", action="store_true",
                        help="before each run but the first, take the next SPU offline "
                             "(the one before back online) and step: the log moved")
    parser.add_argument("--checkpoint-between", action="store_true",
                        help="before each run but the first, step with a HW checkpoint: "
                             "the log moved by entries that name no partition's status")
    parser.add_argument("--plan-between", action="store_true",
                        help="before each run after the first: five ticks of a running drain")
    parser.add_argument("--redis-restarts", type=int, default=0,
                        help="then stop the hot state's Redis and start it again from its "
                             "file this many times, timing the coordinator's tick after each "
                             "and the shards' steps (--only none: no task first)")
    parser.add_argument("--web-produces", type=int, default=0,
                        help="then produce one record as the web does this many times, "
                             "timing the shards' two steps after each (--only none)")
    parser.add_argument("--hot-redis", type=int, default=0,
                        help="the hot state on this many private Redis servers of its own "
                             "(HOT_STATE_REDIS_URLS); 0: on the broker's, as by default")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    between = (spu_offline_and_step if args.outage_between
               else log_moved_and_step if args.checkpoint_between
               else plan_steps_between if args.plan_between else None)

    from _django import setup_bench_store
    from bench_sharded_ticks import grow_to, start_hot_redis

    workdir = Path(tempfile.mkdtemp(prefix="bench-periodic-"))
    hot = start_hot_redis(workdir, args.hot_redis)
    # No live updates: no page watches, and their flusher would outlive the Redis at exit.
    redis = [setup_bench_store(workdir, args.postgres, "periodic",
                               REPLICATION_SHARDS=str(args.shards), LIVE_UPDATES="0",
                               HOT_STATE_REDIS_URLS=",".join(url for _, url in hot))]
    # The server --redis-restarts restarts: the one holding the meta and the log.
    first = [hot[0][0]] if hot else redis
    first_data = workdir / ("hot-redis-0" if hot else "redis")
    try:
        from cluster.services import replication, spu_connect, spu_register

        for i in range(SPUS):
            spu_register(spu_id=i)
            spu_connect(spu_id=i)
        grow_to(args.partitions, 0)
        t = time.perf_counter()
        replication.replication_tick()
        print(f"{args.partitions:,} partitions, {args.shards} shards: first whole tick "
              f"{(time.perf_counter() - t):.1f} s", flush=True)
        for _ in range(2):  # a quiet coordinator tick and every shard's, as the workers run
            step_all()
        out: dict[str, dict[str, float]] = {}
        for name, task in tasks().items():
            if args.only and name not in args.only.split(","):
                continue
            walls, cpus = timed(task, args.repeat, between)
            out[name] = {"first_ms": round(walls[0], 1), "median_ms": round(
                statistics.median(walls), 1), "median_cpu_ms": round(statistics.median(cpus), 1),
                "runs_ms": [round(w, 1) for w in walls]}
            print(f"  {name:<24} wall first {walls[0]:8.0f} ms, median {out[name]['median_ms']:8.0f}"
                  f" ms; CPU median {out[name]['median_cpu_ms']:8.0f} ms", flush=True)
            if name == args.profile:
                if between is not None:
                    between(args.repeat)
                profile = cProfile.Profile()
                profile.runcall(lambda: task.apply().get())  # type: ignore[attr-defined]
                pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
        added = time_topic_added(args.added) if args.added else None
        again = time_made_again(args.added) if args.added and args.made_again else None
        changes = (time_spu_changes(args.spu_changes, args.profile == "spu_step")
                   if args.spu_changes else None)
        plan = (time_plan_ticks(args.plan_ticks, args.profile == "plan_coordinator")
                if args.plan_ticks else None)
        produces = time_web_produces(args.web_produces) if args.web_produces else None
        restarts = (time_redis_restarts(args.redis_restarts, first, first_data)
                    if args.redis_restarts else None)
        if args.json:
            print(json.dumps({"partitions": args.partitions, "shards": args.shards,
                              "tasks": out, "topic_added": added, "made_again": again,
                              "spu_changes": changes,
                              "plan_ticks": plan, "redis_restarts": restarts,
                              "web_produces": produces}))
    finally:
        import os
        for proc in dict.fromkeys([redis[0], first[0], *(p for p, _ in hot[1:])]):
            os.killpg(proc.pid, signal.SIGTERM)  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
