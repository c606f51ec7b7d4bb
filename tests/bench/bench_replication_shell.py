"""Benchmark of the replication shell (store + Redis): 50 SPUs, 10,000 partitions, replication 3.

Prints figures; asserts nothing about time. Uses a throwaway SQLite database and a private
Redis of its own (never a Redis it did not start). Each tick is timed in wall time and in
CPU time of this process (the figure a loaded machine disturbs least); the metadata-log
lines say how many entries a tick appended, what they weigh, and what an hour of log costs
at this size. ``--profile`` prints cProfile's top 25 functions (by cumulative and by own
time) over the ticks with producers; ``--sample`` instead prints each function's share of
their wall time from a sampling profile (tests/bench/_sampler.py: no per-call cost, waits on
Redis included); ``--parts`` the CPU of each part of the busy ticks (tests/bench/_parts.py;
with ``--json``, ``busy_tick_parts_cpu_ms``: their medians). ``--outside-writes``: before
every tick another process (an engine without this one's set cache) writes one record to a
partition, as the web does while the worker ticks. ``--busy M`` puts the producers on M
partitions only (topic "bench"; the others are topic "bench-idle", no producer): what a
mostly steady cluster costs. ``--topics N`` splits the busy partitions over N topics
("bench", "bench-2", ...), each with its producer: what a cluster of many topics costs. ``--json`` prints one JSON object on stdout (the figures below;
the human-readable lines go to stderr, the failover is skipped unless ``--failover``, which
adds ``failover_tick_ms`` and ``failover_tick_cpu_ms``, the tick after SPU 0 goes offline,
and ``failover_led``, ``failover_online``, ``failover_offline_ms``,
``failover_log_entries``, and ``outage_tick_ms`` and ``outage_tick_cpu_ms``, the median of
the next three ticks with the SPU still down, or ``--outage-ticks N``): ``partitions``, ``busy``,
``busy_tick_cpu_ms`` and ``idle_tick_cpu_ms`` (medians of the ticks with and without
producers), ``first_tick_ms`` (wall time; ``first_tick_cpu_ms`` its CPU;
``first_tick_redis_max_command_ms`` and ``first_tick_redis_max_burst_ms`` how long it held
Redis at most, in one command and in one transaction: its every set is new), and
``redis_max_command_ms``, the longest Redis command during the idle and busy ticks from the
private Redis's slow log (every command logged around the ticks), ``redis_busy_tick_cpu_ms``,
Redis's own CPU in a busy tick (median, ``INFO cpu``), and
``mirror_rows_per_tick``, the partition rows the busy ticks' UPDATEs wrote (the offsets
mirror and the reservations), per tick (``mirror_rows_by_tick``: each tick's), and
``rss_mb`` and ``redis_used_memory_mb``, this process's resident memory and Redis's after
the busy ticks (with ``--warm``: what full logs hold). Run:
    .venv/bin/python tests/bench/bench_replication_shell.py [--spus 50] [--partitions 10000]
        [--busy M] [--topics N] [--steps 8] [--profile | --sample | --parts] [--warm RECORDS]
        [--outside-writes] [--json [--failover]]
"""
from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import json
import logging
import os
import pstats
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup_throwaway_django  # noqa: E402
from _parts import Parts  # noqa: E402
from _sampler import Sampler  # noqa: E402
from _slowlog import SlowLog  # noqa: E402,F401 (tests import it from here)


def timed(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t) * 1000, out


def setup_redis(workdir: Path) -> object:
    from django.conf import settings

    from webapp.redis_server import start_private_redis

    proc, settings.REDIS_URL = start_private_redis(workdir / "redis")
    host = {"address": settings.REDIS_URL, **getattr(settings, "CHANNEL_LAYER_HOST", {})}
    settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"] = [host]
    return proc


def timed_cpu(fn) -> tuple[float, float]:
    """Wall and CPU milliseconds of one call."""
    t, c = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000


def memory_figures() -> tuple[float, float]:
    """This process's resident memory (the engine's state, the bench's own included) and
    Redis's ``used_memory``, in MB: what the retained records cost once the logs are
    warmed (docs/durability.md: the retained ids' budget)."""
    from cluster.adapters.redis_keys import client

    rss_kb = next(int(line.split()[1]) for line in Path("/proc/self/status").read_text()
                  .splitlines() if line.startswith("VmRSS:"))
    return rss_kb / 1024, int(client().info("memory")["used_memory"]) / 2**20


def log_figures() -> tuple[int, int]:
    """Entries in the metadata log and their summed size as stored (JSON bytes).

    Redis's MEMORY USAGE samples a stream's first nodes and extrapolates: one large
    topic entry made it report ten times the real size, so the entries are summed."""
    try:
        from cluster.adapters import metadata_log
    except ImportError:  # run against a version from before the log, for comparison
        return 0, 0
    from cluster.ports import bound_to_store

    import json

    with bound_to_store():
        size = sum(len(json.dumps(e.data, separators=(",", ":")))
                   for e in metadata_log.read_all(0))
        return metadata_log.head(), size


IDLE_TOPIC = "bench-idle"
# The topics with producers and their partitions: "bench", then "bench-2" .. (``--topics``).
BUSY_TOPICS: list[tuple[str, int]] = [("bench", 0)]


def busy_topics(partitions: int, topics: int) -> list[tuple[str, int]]:
    """``partitions`` split over ``topics`` topics, "bench" first (the larger ones first)."""
    names = ["bench", *(f"bench-{i}" for i in range(2, topics + 1))]
    return [(name, partitions // topics + (i < partitions % topics))
            for i, name in enumerate(names)]


def set_rates(per_partition: float) -> None:
    """Every busy topic's producer at ``per_partition`` records a second a partition."""
    from cluster.services.records import topic_set_producer_rate

    for name, size in BUSY_TOPICS:
        topic_set_producer_rate(name=name, rate=size * per_partition)


def build(spus: int, partitions: int, *, racks: int = 0, rate: float = 0.0,
          idle: int = 0, topics: int = 1) -> None:
    """``spus`` online SPUs (over ``racks`` racks, round robin, if any) and topic "bench"
    (replication 3, min LRS 2) with a simulated producer of ``rate`` records/s; ``idle``
    more partitions in topic "bench-idle", which never gets a producer. ``topics``: the
    ``partitions`` split over that many topics (``BUSY_TOPICS``), each with its share of
    ``rate``."""
    from cluster.models import Spu
    from cluster.services import spu_connect, spu_register, topic_create

    for i in range(spus):
        spu_register(spu_id=i, rack=f"rack-{i % racks}" if racks else "")
        spu_connect(spu_id=i)
    BUSY_TOPICS[:] = busy_topics(partitions, topics)
    for name, size in BUSY_TOPICS:
        topic_create(name=name, partitions=size, replication=3, min_lrs=2)
    if idle:
        topic_create(name=IDLE_TOPIC, partitions=idle, replication=3, min_lrs=2)
    if rate:
        set_rates(rate / partitions)
    assert Spu.objects.count() == spus


def figures(label: str, times: list[float]) -> None:
    print(f"{label:<44} median {statistics.median(times):7.1f} ms  "
          f"(min {min(times):.1f}, max {max(times):.1f}, {len(times)} steps) "
          f"-> {1000 / statistics.median(times):.1f} steps/s")
    if os.environ.get("BENCH_EACH"):
        print("  each:", " ".join(f"{t:.0f}" for t in times))


# What ``--profile-ticks`` profiles, as the report names it.
PROFILED = {"busy": "the ticks with producers", "idle": "the ticks without producers",
            "failover": "the failover's and the outage's ticks"}


def print_profile(profile: cProfile.Profile, what: str = PROFILED["busy"]) -> None:
    for order in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).strip_dirs().sort_stats(order).print_stats(25)
        print(f"--- profile of {what}, top 25 by {order} ---")
        print("\n".join(line for line in out.getvalue().splitlines() if line.strip()))


def warm_logs(partitions: int, records: int, now: int) -> int:
    """Fill every partition's log with ``records`` records (200 a tick, fewer above 5,000
    partitions: a rate is at most 1,000,000 a second), as hours of
    producing at one record per second would: the steady state, where the retained log
    (REPLICATION_LOG_RETENTION) is long, not the first minutes of a cluster."""
    from cluster.services.replication import replication_tick
    from cluster.services.waiting import LocalQueue

    t, done, rate = time.perf_counter(), 0, None
    while done < records:
        # (At most the 1,000,000 records a second a producer rate may have.)
        chunk = min(200, records - done, max(1, 1_000_000 // partitions))
        if partitions * chunk != rate:
            rate = partitions * chunk
            set_rates(chunk)
            # A rate's first tick only starts its producer's clock (simulated_producers
            # _due): without it the first 200 records a partition were never produced.
            replication_tick(now=now, dispatch=LocalQueue())
        now += 1000
        replication_tick(now=now, dispatch=LocalQueue())
        done += chunk
    print(f"logs warmed to {records} records per partition in {time.perf_counter() - t:.0f} s")
    return now


def warmed_leo() -> int:
    """Partition 0's leader LEO once the logs are warmed."""
    from cluster.adapters import hot_state

    rs = hot_state.load([("bench", 0)]).state.replica_sets[("bench", 0)]
    return rs.replica[rs.leader].leo if rs.leader is not None else 0


class RowWrites:
    """Rows of the partition table the ticks' statements write (UPDATE, per executemany
    row): the offsets mirror's and the reservations'. Read from the database connection,
    so the same figure comes from a tree without the mirror's own counters."""

    def __init__(self) -> None:
        self.rows = 0

    def __call__(self, execute, sql, params, many, context):
        if sql.lstrip().upper().startswith("UPDATE") and "cluster_partition" in sql:
            self.rows += len(params) if many else 1
        return execute(sql, params, many, context)


def write_outside(rng: random.Random, partitions: int) -> bool:
    """One acks=1 record on a partition of "bench" from another process's engine (no set
    cache, no offsets mirror of this one's): a produce from the web while the worker ticks.
    Not timed: the tick after it is. True when the leader took it."""
    from cluster.engine.engine import using
    from cluster.services.records import records_produce
    from tests.helpers import another_process

    with using(another_process()):
        outcome = records_produce(topic="bench", partition=rng.randrange(
            min(partitions, BUSY_TOPICS[0][1])), count=1)
    return outcome.state == "acknowledged"


def bench_ticks(partitions: int, steps: int,
                profile: cProfile.Profile | Sampler | Parts | None = None,
                warm: int = 0, busy: int | None = None, slowlog: SlowLog | None = None,
                result: dict[str, object] | None = None, outside: bool = False, *,
                profile_idle: bool = False) -> int:
    """Idle ticks, then ticks with producers on ``busy`` partitions (all when None);
    their figures printed, and put in ``result`` when given. ``outside``: before each
    tick, another process writes one record (``write_outside``). ``profile`` brackets the
    busy ticks, or the idle ones when ``profile_idle``."""
    idle_profile, profile = (profile, None) if profile_idle else (None, profile)
    from cluster.services.replication import replication_tick
    from cluster.services.waiting import LocalQueue

    busy = partitions if busy is None else busy
    result = {} if result is None else result
    rng = random.Random(33)
    result["outside_writes"] = 0

    def before_tick() -> None:
        if outside:
            result["outside_writes"] += write_outside(rng, busy or partitions)

    now = int(time.time() * 1000)
    if slowlog is not None:
        slowlog.start()
    ms, used = timed_cpu(lambda: replication_tick(now=now, dispatch=LocalQueue()))
    print(f"first tick (topology sync, {partitions} replica sets created): {ms:.0f} ms "
          f"({used:.0f} ms CPU)")
    result["first_tick_ms"] = round(ms, 1)
    result["first_tick_cpu_ms"] = round(used, 1)
    if slowlog is not None:  # how long the first tick held Redis at most, then from zero
        slowlog.collect()
        result["first_tick_redis_max_command_ms"] = slowlog.longest_us / 1000
        result["first_tick_redis_max_burst_ms"] = slowlog.longest_burst_us / 1000
        result["first_tick_redis_max_command"] = slowlog.longest_detail
        print(f"first tick's longest Redis command {slowlog.longest_us / 1000:.1f} ms "
              f"({slowlog.longest_detail[:80]}), longest burst "
              f"{slowlog.longest_burst_us / 1000:.1f} ms")
        slowlog.forget()
    if slowlog is not None:
        slowlog.start()
    idle, idle_cpu = [], []
    for _ in range(steps):
        now += 1000
        before_tick()
        if idle_profile is not None:
            idle_profile.enable()
        wall, used = timed_cpu(lambda: replication_tick(now=now, dispatch=LocalQueue()))
        if idle_profile is not None:
            idle_profile.disable()
        idle.append(wall)
        idle_cpu.append(used)
        if slowlog is not None:
            slowlog.collect()
    figures("tick, idle cluster", idle)
    figures("tick CPU, idle cluster", idle_cpu)
    if warm:
        if slowlog is not None:
            slowlog.stop()
        now = warm_logs(busy, warm, now)
        result["warmed_leo"] = warmed_leo()
    # One record per busy partition per second, acks=1, from the simulated producer.
    set_rates(1)
    replication_tick(now=now, dispatch=LocalQueue())
    if slowlog is not None:
        slowlog.start()
    busy_from = len(slowlog.tick_cpu_s) if slowlog is not None else 0
    wall_times, cpu = [], []
    entries_before, bytes_before = log_figures()
    from django.db import connection

    writes, by_tick = RowWrites(), []
    for _ in range(steps):
        now += 1000
        before_tick()
        if profile is not None:
            profile.enable()
        with connection.execute_wrapper(writes):
            wall, used = timed_cpu(lambda: replication_tick(now=now, dispatch=LocalQueue()))
        if profile is not None:
            profile.disable()
        by_tick.append(writes.rows - sum(by_tick))
        wall_times.append(wall)
        cpu.append(used)
        if slowlog is not None:
            slowlog.collect()
    figures(f"tick, {busy} records/s produced", wall_times)
    figures(f"tick CPU, {busy} records/s produced", cpu)
    entries, size = log_figures()
    per_tick = (entries - entries_before) / steps
    print(f"metadata log, steady ticks with producers: {per_tick:.1f} entries/tick, "
          f"{(size - bytes_before) / steps / 1024:.1f} KiB/tick "
          f"-> {per_tick * 3600:,.0f} entries/h, "
          f"{(size - bytes_before) / steps * 3600 / 2**20:.1f} MiB/h")
    result.update(
        busy_tick_cpu_ms=round(statistics.median(cpu), 1),
        idle_tick_cpu_ms=round(statistics.median(idle_cpu), 1),
        busy_tick_wall_ms=round(statistics.median(wall_times), 1),
        idle_tick_wall_ms=round(statistics.median(idle), 1),
        log_entries_per_busy_tick=per_tick,
        # Partition rows the busy ticks wrote (offsets, reservations), per tick.
        mirror_rows_per_tick=writes.rows / steps, mirror_rows_by_tick=by_tick)
    print(f"partition rows written (UPDATE), ticks with producers: {writes.rows / steps:,.0f} "
          f"per tick ({by_tick})")
    rss, used = memory_figures()
    result.update(rss_mb=round(rss), redis_used_memory_mb=round(used))
    print(f"memory after the busy ticks: this process {rss:,.0f} MB, Redis {used:,.0f} MB")
    if slowlog is not None:
        slowlog.stop()
        result.update(redis_max_command_ms=slowlog.longest_us / 1000,
                      redis_max_command=slowlog.longest_command,
                      redis_max_command_detail=slowlog.longest_detail,
                      # The tick it fell in: 0 .. steps-1 the idle ticks, then the busy ones.
                      redis_max_command_tick=slowlog.longest_tick,
                      redis_max_burst_ms=slowlog.longest_burst_us / 1000,
                      redis_max_tick_commands_ms=max(slowlog.tick_totals_us, default=0) / 1000,
                      redis_max_tick_cpu_ms=max(slowlog.tick_cpu_s, default=0) * 1000,
                      # Redis's own CPU (INFO cpu) in a busy tick, median: what a tick asks
                      # of the one server (the slow log's logging included, in both trees).
                      redis_busy_tick_cpu_ms=round(1000 * statistics.median(
                          slowlog.tick_cpu_s[busy_from:] or [0]), 1))
        print(f"Redis (slow log, every command): longest {slowlog.longest_us / 1000:.1f} ms "
              f"({slowlog.longest_command}); longest burst of one client "
              f"{slowlog.longest_burst_us / 1000:.1f} ms; a tick's commands summed, at most "
              f"{max(slowlog.tick_totals_us, default=0) / 1000:.1f} ms; Redis's CPU a busy "
              f"tick, median {result['redis_busy_tick_cpu_ms']:.0f} ms")
        print(f"Redis's time by kind of command over the busy ticks (ms): {slowlog.report()}")
    return now


# Ticks timed after the failover's, the SPU still down.
OUTAGE_TICKS = 3


def bench_failover(now: int, result: dict[str, object], spu: int = 0,
                   ticks: int = OUTAGE_TICKS,
                   profile: cProfile.Profile | Sampler | None = None) -> None:
    from cluster.adapters import hot_state
    from cluster.core.replication import Resolution
    from cluster.services.outages import spu_offline
    from cluster.services.replication import replication_tick
    from cluster.services.waiting import LocalQueue

    led = [k for k, rs in hot_state.load().state.replica_sets.items() if rs.leader == spu]
    entries_before, bytes_before = log_figures()
    slowlog = SlowLog()  # how long the failover (its unit and the next tick) held Redis
    slowlog.start()
    t0 = time.perf_counter()
    spu_offline(spu_id=spu, by="bench")
    if profile is not None:  # --profile-failover: the failover's tick and the outage's
        profile.enable()
    t1, c1 = time.perf_counter(), time.process_time()
    replication_tick(now=now + 1000, dispatch=LocalQueue())
    t2, c2 = time.perf_counter(), time.process_time()
    slowlog.collect()
    slowlog.stop()
    after = hot_state.load(led).state.replica_sets
    online = sum(after[k].resolution is Resolution.ONLINE and after[k].leader != spu for k in led)
    entries, size = log_figures()
    # The outage goes on: the ticks while the SPU stays down (an outage rehearsal's).
    outage, outage_cpu = [], []
    for i in range(ticks):
        wall, used = timed_cpu(lambda: replication_tick(now=now + 2000 + 1000 * i,
                                                        dispatch=LocalQueue()))
        outage.append(wall)
        outage_cpu.append(used)
    if profile is not None:
        profile.disable()
    result.update(failover_led=len(led), failover_online=online,
                  failover_offline_ms=round(1000 * (t1 - t0), 1),
                  failover_tick_ms=round(1000 * (t2 - t1), 1),
                  failover_tick_cpu_ms=round(1000 * (c2 - c1), 1),
                  failover_log_entries=entries - entries_before,
                  failover_redis_max_command_ms=slowlog.longest_us / 1000,
                  failover_redis_max_command=slowlog.longest_detail[:120],
                  failover_redis_max_burst_ms=slowlog.longest_burst_us / 1000,
                  outage_tick_ms=round(statistics.median(outage), 1),
                  outage_tick_cpu_ms=round(statistics.median(outage_cpu), 1))
    print(f"failover of SPU {spu}: it led {len(led)} replica sets")
    print(f"  SPU offline (its unit of work, elections included) {1000 * (t1 - t0):7.1f} ms")
    print(f"  the next tick                                      {1000 * (t2 - t1):7.1f} ms "
          f"({1000 * (c2 - c1):.0f} ms CPU)")
    print(f"  Online with a new leader: {online}/{len(led)}, total {1000 * (t2 - t0):.0f} ms")
    print(f"  the longest Redis command {slowlog.longest_us / 1000:.1f} ms "
          f"({slowlog.longest_detail[:60]}), burst {slowlog.longest_burst_us / 1000:.1f} ms")
    print(f"  then {ticks} ticks with the SPU still down: median "
          f"{statistics.median(outage):.1f} ms ({statistics.median(outage_cpu):.1f} ms CPU)")
    print(f"  metadata log: {entries - entries_before} entries, "
          f"{(size - bytes_before) / 1024:.1f} KiB for this failover; an outage and its "
          f"return every 10 minutes -> {12 * (size - bytes_before) / 2**20:.1f} MiB/h")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--spus", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=10_000)
    ap.add_argument("--busy", type=int, default=None, metavar="M",
                    help="producers on M partitions only (default: all)")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--sample", action="store_true",
                    help="a wall-clock sampling profile of the busy ticks (tests/bench/"
                         "_sampler.py): each function's share of wall time, no cProfile")
    ap.add_argument("--parts", action="store_true",
                    help="CPU of each part of the busy ticks (tests/bench/_parts.py: the "
                         "round, the producers, the save's loop and writes, the projections)")
    ap.add_argument("--warm", type=int, default=0, metavar="RECORDS",
                    help="fill every log with this many records before the busy ticks")
    ap.add_argument("--outside-writes", action="store_true",
                    help="before every tick, another process (an engine without this "
                         "one's set cache) writes one record to a partition")
    ap.add_argument("--failover", action="store_true",
                    help="with --json, end with the failover too (SPU 0 offline, then a "
                         "tick): failover_tick_ms, failover_tick_cpu_ms and friends")
    ap.add_argument("--profile-ticks", choices=("busy", "idle", "failover"), default="busy",
                    help="with --sample or --profile: the ticks profiled (busy: those with "
                         "producers; idle: those without; failover: the failover's tick "
                         "and the outage's ticks after it)")
    ap.add_argument("--outage-ticks", type=int, default=OUTAGE_TICKS, metavar="N",
                    help="ticks timed with the SPU still down after the failover's "
                         "(outage_tick_*: their median)")
    ap.add_argument("--topics", type=int, default=1, metavar="N",
                    help="the busy partitions split over N topics, each with its producer")
    ap.add_argument("--json", action="store_true",
                    help="one JSON object on stdout; the other lines on stderr")
    args = ap.parse_args(argv)
    if args.busy is not None and not 0 <= args.busy <= args.partitions:
        ap.error("--busy must be between 0 and --partitions")
    if args.steps < 1:
        ap.error("--steps must be at least 1")
    busy = args.partitions if args.busy is None else args.busy
    if not 1 <= args.topics <= max(busy, 1):
        ap.error("--topics must be between 1 and the busy partitions")
    if args.profile_ticks != "busy" and not (args.sample or args.profile):
        ap.error("--profile-ticks needs --sample or --profile")
    if args.outage_ticks < 1:
        ap.error("--outage-ticks must be at least 1")
    result: dict[str, object] = {"partitions": args.partitions, "busy": busy,
                                 "spus": args.spus, "steps": args.steps,
                                 "topics": args.topics}
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        run(args, busy, result)
    if args.json:
        print(json.dumps(result))


def run(args: argparse.Namespace, busy: int, result: dict[str, object]) -> None:
    workdir = setup_throwaway_django()
    from django.conf import settings

    settings.REPLICATION_SIMULATED_PRODUCERS = True
    proc = setup_redis(workdir)
    try:
        # The busy partitions are topic "bench", the others "bench-idle".
        ms, _ = timed(lambda: build(args.spus, busy or args.partitions,
                                    idle=args.partitions - busy if busy else 0,
                                    topics=args.topics))
        print(f"{args.spus} SPUs, {args.partitions} partitions ({busy} with producers), "
              f"replication 3 (store built in {ms:.0f} ms)")
        print(f"load average: {os.getloadavg()}")
        # BENCH_SAMPLE_LINES=1: the sampling profile counts each frame's line too.
        profile = (Sampler(lines=bool(os.environ.get("BENCH_SAMPLE_LINES"))) if args.sample
                   else Parts() if args.parts
                   else cProfile.Profile() if args.profile else None)
        failover_profile = profile if args.profile_ticks == "failover" else None
        now = bench_ticks(args.partitions, args.steps,
                          None if failover_profile is not None else profile, args.warm, busy,
                          SlowLog(), result, args.outside_writes,
                          profile_idle=args.profile_ticks == "idle")
        result["load_average"] = os.getloadavg()[0]
        if not args.json or args.failover or failover_profile is not None:
            bench_failover(now, result, ticks=args.outage_ticks,
                           profile=failover_profile)  # type: ignore[arg-type]
        print(f"load average: {os.getloadavg()}")
        if isinstance(profile, Parts):
            print(profile.report())
            result["busy_tick_parts_cpu_ms"] = profile.medians_ms()
        elif isinstance(profile, Sampler):
            print(profile.report(PROFILED[args.profile_ticks]))
        elif profile is not None:
            print_profile(profile, PROFILED[args.profile_ticks])
    finally:
        # A live flush still in flight would log its failure once Redis is gone.
        logging.getLogger("cluster.adapters.live_batches").setLevel(logging.CRITICAL)
        proc.terminate()


if __name__ == "__main__":
    main()
