"""Page and API speed at 100,000 partitions: server time through Django's test client.

Run: .venv/bin/python tests/bench/bench_pages.py [postgres] [--stepping [--engine loop]]
                                                 [--profile URL] [--partitions N] [--json]
Builds a throwaway store (SQLite under a temp dir; ``postgres`` a throwaway
database on 127.0.0.1:5432) and a private Redis: 200 SPUs in 5 racks, one
topic of 50,000 partitions, 50 topics of 1,000 and 1,000 of 3 (RF 3, 103,000
partitions), SPU 0 offline with the partitions it led leaderless and those it
followed under-replicated. Then times every page and API list the issue names
and prints best / median / worst wall time, median CPU time, queries and size.
``--profile URL`` prints a cProfile of one more request of that URL. Goal:
every median under 300 ms (issue 22), every p99 under 300 ms while the engine steps
(issue 33). Figures, not assertions (DESIGN.md). ``--partitions N`` scales the build
(N/103,000 of each kind of topic; the default is the full 103,000) for machines that
cannot step 100,000 partitions; ``--json`` ends with one JSON line of every page's
p50/p99.

``--stepping`` times the same pages while the engine steps, as ``make run`` runs it:
its Celery worker nodes (WORKER_NODES of WORKER_CONCURRENCY processes, 2 of 1 unless set)
and beat sending
the tick every second, simulated producers appending one record per partition per
second to ``huge`` and the ``big-*`` topics (101,000 partitions), REPLICATION_SHARDS
as set (1 unless set). It implies ``postgres`` (SQLite locks under the engine's
writes). The pages are timed in this process once two ticks are over (the first loads
the hot state and elects leaders for SPU 0's partitions), in turn round after round so
each meets every phase of the ticks; it then prints the engine's steps per second during
the window, its tick times, the CPU the worker and beat used and how the store's rows
moved (HW sum, led partitions). Wall times share 2 cores with the engine: read CPU;
SQL is the wall the queries took.
``--engine loop`` runs the tick alone instead, back to back in one process (at most once
a second), so the engine writes all through the window. BENCH_PAGES_WINDOW_S sets the
window (60 s), BENCH_PAGES_LOGS a directory to keep the engine's logs in.
Every run ends with a line on this process's collector (collections per generation, the
longest, the objects not frozen by type); BENCH_PAGES_GC_DETAIL=1 also lists the
collections over 10 ms with the page each fell on (counting the objects costs: not for
the figures).
"""
from __future__ import annotations

import argparse
import ast
import cProfile
import gc
import json
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "bench"))
from _django import setup_bench_store  # noqa: E402
from tests.stack import load_run_script  # noqa: E402
TMP = Path(tempfile.mkdtemp(prefix="bench-pages-"))
RACKS = ["rack-a", "rack-b", "rack-c", "rack-d", "rack-e"]
RUNS = 9
FULL = 103_000
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


# A tick's line in the worker's log (celery -l info); the result None is a skipped tick.
TICK = re.compile(r"^\[(?P<at>[\d-]+ [\d:,]+): \w+/[^\]]+\] Task cluster\.tasks\."
                  r"(?P<task>replication_shard_tick|replication_tick)\[[^\]]+\] succeeded in "
                  r"(?P<s>[\d.e-]+)s: (?P<result>.*)$")
FIRST_TICK_S = 900
# The timing window while the engine steps: several ticks, whatever a tick costs.
WINDOW_S = float(os.environ.get("BENCH_PAGES_WINDOW_S", "60"))


def setup(postgres: bool) -> object:
    """Private Redis and a throwaway store, before Django reads its settings.

    BENCH_PAGES_DB: a SQLite file kept between runs (built once; for profiling rounds)."""
    kept = os.environ.get("BENCH_PAGES_DB")
    return setup_bench_store(TMP, postgres, "pages", Path(kept) if kept else None,
                             METRICS_TOKEN="bench-token")


def shape(partitions: int) -> tuple[int, int, int]:
    """(partitions of ``huge``, ``big-*`` topics of 1,000, small topics of 3) for a build of
    about ``partitions``: each kind scaled from the full 50,000 + 50 x 1,000 + 1,000 x 3."""
    scale = partitions / FULL
    return max(100, round(50_000 * scale)), max(1, round(50 * scale)), max(1, round(1000 * scale))


def pages_for(huge: int) -> list[tuple[str, str]]:
    """PAGES with the last page of ``huge`` where its size puts it (100 rows a page)."""
    last_page, last_offset = (huge + 99) // 100, max(0, huge - 100)
    return [(label.replace("50,000", f"{huge:,}"),
             url.replace("page=500", f"page={last_page}")
                .replace("offset=49900", f"offset={last_offset}")) for label, url in PAGES]


def build(partitions: int = FULL) -> None:
    from cluster.core.spus import SpuResolution
    from cluster.services import spu_register, topic_create
    from cluster.services.spus import spu_set_resolution

    huge, bigs, small = shape(partitions)
    for spu in range(200):
        spu_register(spu_id=spu, rack=RACKS[spu % len(RACKS)], by="bench")
        spu_set_resolution(spu_id=spu, resolution=SpuResolution.ONLINE, by="bench")
    topic_create(name="huge", partitions=huge, replication=3, by="bench")
    for t in range(bigs):
        topic_create(name=f"big-{t:02d}", partitions=1000, replication=3, by="bench")
    sys.path.insert(0, str(ROOT / "tests" / "bench"))
    from bench_metrics_scrape import build_small_topics

    build_small_topics(small)
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


def _freeze_loaded():
    try:
        from cluster.perf import freeze_loaded
    except ImportError:  # before issue 33: the server froze nothing
        return None
    return freeze_loaded


# ``--engine loop``: one process running the tick back to back (at most once a second),
# nothing else; its lines read as the worker's so one parser counts both.
TICK_LOOP = """
import django, time
from datetime import datetime
django.setup()
from cluster.services.replication import replication_tick
while True:
    start = time.monotonic()
    try:
        result = replication_tick(lock_timeout_s=1.0)
    except TimeoutError:
        result = None
    took = time.monotonic() - start
    print(f"[{datetime.now():%Y-%m-%d %H:%M:%S,%f}: INFO/loop] Task cluster.tasks."
          f"replication_tick[loop] succeeded in {took}s: {result}", flush=True)
    time.sleep(max(0.0, 1.0 - took))
"""


def start_engine(logs: Path, kind: str) -> dict[str, subprocess.Popen]:
    """``celery``: a worker and beat as ``make run`` starts them (the tick, healing, the
    reconcile beat...); ``loop``: the tick alone, back to back. Producers on the big topics."""
    from cluster.models import Topic

    huge = Topic.objects.get(name="huge")
    Topic.objects.filter(name="huge").update(producer_rate=huge.partitions)
    Topic.objects.filter(name__startswith="big-").update(producer_rate=1000)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "REPLICATION_SIMULATED_PRODUCERS": "1"}
    base = [sys.executable, "-m", "celery", "-A", "webapp"]
    # make run's worker nodes (scripts/run.py: workers), their logs named as there.
    commands = {child.log.stem: child.args + ["--without-gossip", "--without-mingle"]
                for child in load_run_script().workers(logs)}
    commands["beat"] = base + ["beat", "-l", "info", "-s", str(logs / "beat-schedule")]
    if kind == "loop":
        commands = {"worker": [sys.executable, "-c", TICK_LOOP]}
    procs = {}
    for name, command in commands.items():
        with (logs / f"{name}.log").open("w") as out:
            procs[name] = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out,
                                           stderr=subprocess.STDOUT, start_new_session=True)
    return procs


def stop_engine(procs: dict[str, subprocess.Popen]) -> None:
    from bench_sharded_ticks import stop
    stop(procs, wait_s=20)


def ticks(logs: Path, since: datetime | None = None, until: datetime | None = None
          ) -> list[tuple[str, float, dict]]:
    """(task, seconds, result) of each tick that did its work, in the window given."""
    out = []
    lines = [line for log in sorted(logs.glob("worker*.log"))
             for line in log.read_text(errors="replace").splitlines()]
    for line in lines:
        m = TICK.match(line)
        if not m or m["result"] == "None":
            continue
        at = datetime.strptime(m["at"], "%Y-%m-%d %H:%M:%S,%f")
        if (since is None or at >= since) and (until is None or at <= until):
            out.append((m["task"], float(m["s"]), ast.literal_eval(m["result"])))
    return out


def wait_ticks(logs: Path, procs: dict[str, subprocess.Popen], n: int) -> float:
    """Seconds until ``n`` ticks did their work (the first one loads and elects: no rhythm)."""
    t0 = time.monotonic()
    while len(ticks(logs)) < n:
        dead = [name for name, proc in procs.items() if proc.poll() is not None]
        if dead or time.monotonic() - t0 > FIRST_TICK_S:
            raise RuntimeError(f"no tick ({'died: ' + ', '.join(dead) if dead else 'timeout'});"
                               f" see {logs}")
        time.sleep(1)
    return time.monotonic() - t0


def engine_cpu(procs: dict[str, subprocess.Popen]) -> dict[str, float]:
    """CPU seconds of each started process and its children (the worker's pool)."""
    import psutil

    out = {}
    for name, proc in procs.items():
        try:
            top = psutil.Process(proc.pid)
            out[name] = sum(sum(p.cpu_times()[:2]) for p in [top, *top.children(True)])
        except psutil.NoSuchProcess:
            out[name] = 0.0
    return out


def stored_records() -> tuple[int, int]:
    """Committed records and partitions with a leader, as the store's rows say: the
    engine's mirror writes moving them show it wrote while the pages were timed."""
    from django.db.models import Count, Sum

    from cluster.models import Partition

    got = Partition.objects.aggregate(hw=Sum("hw"), led=Count("leader"))
    return got["hw"] or 0, got["led"]


# Redis serves one command at a time: one of the engine's that runs long stalls every
# page's Redis read (live sequences, the network links, killed loops) for as long.
SLOW_REDIS_US = 50_000


def redis_slowlog_reset() -> None:
    import redis

    r = redis.Redis.from_url(os.environ["REDIS_URL"])
    r.config_set("slowlog-log-slower-than", SLOW_REDIS_US)
    r.config_set("slowlog-max-len", 10_000)
    r.slowlog_reset()


def report_redis_slowlog() -> None:
    """Commands that held the private Redis over SLOW_REDIS_US during the window."""
    import redis

    slow = redis.Redis.from_url(os.environ["REDIS_URL"]).slowlog_get(10_000)
    if not slow:
        print(f"Redis: no command over {SLOW_REDIS_US / 1000:.0f} ms during the window")
        return
    worst = sorted(slow, key=lambda e: -e["duration"])[:5]
    print(f"Redis: {len(slow)} commands over {SLOW_REDIS_US / 1000:.0f} ms during the window, "
          f"{sum(e['duration'] for e in slow) / 1e6:.1f} s in all; longest: " + "; ".join(
              f"{e['duration'] / 1000:.0f} ms {_command(e['command'])}" for e in worst),
          flush=True)


def _command(raw: bytes | str) -> str:
    """The command on one line (a script's text included), cut short."""
    text = " ".join((raw.decode(errors="replace") if isinstance(raw, bytes) else str(raw))
                    .split())
    return text[:60] + ("…" if len(text) > 60 else "")


def report_engine(logs: Path, since: datetime, until: datetime, cpu: dict[str, float],
                  before: tuple[int, int]) -> None:
    window = (until - since).total_seconds()
    after = stored_records()
    done = ticks(logs, since, until)
    whole = [s for task, s, r in done if task == "replication_tick" and r.get("shards", 0) == 0]
    shard: dict[int, list[float]] = {}
    for task, s, r in done:
        if task == "replication_shard_tick":
            shard.setdefault(r["shard"], []).append(s)
    shards = int(os.environ.get("REPLICATION_SHARDS", "1"))
    steps = len(whole) + (min(len(shard.get(i, [])) for i in range(shards)) if shards > 1 else 0)
    times = sorted(whole + [s for v in shard.values() for s in v])
    spread = (f"tick wall median {statistics.median(times):.2f} s, worst {times[-1]:.2f} s"
              if times else "no tick finished")
    print(f"engine during the {window:.0f} s window: {steps} steps = {steps / window:.2f} steps/s"
          f" (goal 1); {spread}; CPU " + ", ".join(f"{n} {c / window:.2f} cores"
                                                  for n, c in cpu.items()), flush=True)
    print(f"store during the window: HW sum {before[0]:,} -> {after[0]:,}, partitions with a "
          f"leader {before[1]:,} -> {after[1]:,}", flush=True)


def client():
    from django.contrib.auth import get_user_model
    from django.test import Client

    from cluster.roles import make_operator

    user, _ = get_user_model().objects.get_or_create(username="bench")
    make_operator(user)
    c = Client()
    c.force_login(user)
    return c


def measure(c, label: str, url: str) -> dict[str, float]:
    warm(c, url)
    wall, cpu, sql, gcs, queries, size = [], [], [], [], 0, 0
    for _ in range(RUNS):
        gc0 = GC_MS[0]
        ms, cpu_ms, sql_ms, queries, size = timed_get(c, url)
        wall.append(ms)
        cpu.append(cpu_ms)
        sql.append(sql_ms)
        gcs.append(GC_MS[0] - gc0)
    return print_line(label, wall, cpu, sql, queries, size, gcs)


def measure_spread(c, pages: list[tuple[str, str]], window_s: float) -> list[dict[str, float]]:
    """Every page in turn, round after round, for at least RUNS rounds and ``window_s``:
    each page's requests then meet the engine in every phase of its ticks."""
    for _, url in pages:
        warm(c, url)
    walls: dict[str, list[float]] = {url: [] for _, url in pages}
    cpus: dict[str, list[float]] = {url: [] for _, url in pages}
    sqls: dict[str, list[float]] = {url: [] for _, url in pages}
    gcs: dict[str, list[float]] = {url: [] for _, url in pages}
    last: dict[str, tuple[int, int]] = {}
    end = time.monotonic() + window_s
    while len(walls[pages[0][1]]) < RUNS or time.monotonic() < end:
        for _, url in pages:
            gc0 = GC_MS[0]
            ms, cpu_ms, sql_ms, queries, size = timed_get(c, url)
            walls[url].append(ms)
            cpus[url].append(cpu_ms)
            sqls[url].append(sql_ms)
            gcs[url].append(GC_MS[0] - gc0)
            last[url] = (queries, size)
    return [print_line(label, walls[url], cpus[url], sqls[url], *last[url], gcs[url])
            for label, url in pages]


def warm(c, url: str) -> None:
    """Template compilation and first-use imports are not page time."""
    unlinked(c.get(url, **auth_for(url)))


def unlinked(response):
    """The response without the test client's link back to itself (``json``, a partial
    of the response): a server keeps no such cycle, so what the page leaves to the
    cyclic GC is the page's own."""
    response.__dict__.pop("json", None)
    return response


def auth_for(url: str) -> dict[str, str]:
    return {"HTTP_AUTHORIZATION": "Bearer bench-token"} if url == "/metrics" else {}


# The collector's pauses in this process, summed: a p99 that is a gen-2 collection over the
# whole heap is the process's, not the page's (``--profile-slow`` prints them apart).
GC_MS = [0.0]
_gc_start = [0.0]
# Per generation: collections and their longest pause (ms), for the end-of-run report.
GC_BY_GEN: dict[int, list[float]] = {0: [0, 0.0], 1: [0, 0.0], 2: [0, 0.0]}
# BENCH_PAGES_GC_DETAIL=1: every collection over 10 ms, with the page it fell on and the
# objects its generations held when it began (counting them costs, hence only when asked).
GC_DETAIL = os.environ.get("BENCH_PAGES_GC_DETAIL") == "1"
GC_SLOW: list[tuple[float, int, str, int, int]] = []
CURRENT_URL = [""]
_gc_objects = [0]


def _gc_timer(phase: str, info: dict) -> None:
    if phase == "start":
        if GC_DETAIL:
            _gc_objects[0] = sum(gc.get_count()) if info["generation"] == 0 else sum(
                len(gc.get_objects(g)) for g in range(info["generation"] + 1))
        _gc_start[0] = time.perf_counter()
    else:
        ms = (time.perf_counter() - _gc_start[0]) * 1000
        if GC_DETAIL and ms > 10:
            GC_SLOW.append((ms, info["generation"], CURRENT_URL[0], _gc_objects[0],
                            info["collected"]))
        GC_MS[0] += ms
        gen = GC_BY_GEN[info["generation"]]
        gen[0] += 1
        gen[1] = max(gen[1], ms)


def report_gc() -> None:
    """What this process's collector did over the run and what a full collection walks:
    the objects not frozen, by type (a cache growing in the pages' process shows here)."""
    from collections import Counter

    loose = gc.get_objects()
    kinds = Counter(type(o).__name__ for o in loose).most_common(6)
    print("GC: " + ", ".join(f"gen {g}: {n:.0f} collections, longest {ms:.1f} ms"
                             for g, (n, ms) in GC_BY_GEN.items())
          + f"; {len(loose):,} objects not frozen ({gc.get_freeze_count():,} frozen): "
          + ", ".join(f"{k} {n:,}" for k, n in kinds), flush=True)
    for ms, gen, url, objects, collected in sorted(GC_SLOW, reverse=True)[:15]:
        print(f"  GC gen {gen} {ms:6.1f} ms on {url}: {objects:,} objects, {collected:,} "
              f"collected", flush=True)


def profile_slow(c, url: str, slow_ms: float, slow: dict[str, pstats.Stats]) -> None:
    """One more request of ``url`` under cProfile, its stats kept when it took over
    ``slow_ms`` of CPU: what the slowest requests spend their time on."""
    profiler = cProfile.Profile()
    cpu_start, gc0 = time.process_time(), GC_MS[0]
    profiler.enable()
    unlinked(c.get(url, **auth_for(url)))
    profiler.disable()
    cpu = (time.process_time() - cpu_start) * 1000
    if cpu > slow_ms:
        print(f"  slow: {url} {cpu:.0f} ms CPU under the profiler, GC {GC_MS[0] - gc0:.0f} ms",
              flush=True)
        if url in slow:
            slow[url].add(profiler)
        else:
            slow[url] = pstats.Stats(profiler)


def timed_get(c, url: str) -> tuple[float, float, float, int, int]:
    """Wall ms, CPU ms (this process), ms waiting on SQL, queries and bytes of one request;
    the collector's ms in it adds up in GC_MS."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    # The log keeps 9,000 queries: a long stepping window filled it and counted none.
    connection.queries_log.clear()
    CURRENT_URL[0] = url
    with CaptureQueriesContext(connection) as ctx:
        start, cpu_start = time.perf_counter(), time.process_time()
        response = unlinked(c.get(url, **auth_for(url)))
        wall = (time.perf_counter() - start) * 1000
        cpu = (time.process_time() - cpu_start) * 1000
    assert response.status_code == 200, (url, response.status_code)
    sql = sum(float(q["time"]) for q in ctx.captured_queries) * 1000
    return wall, cpu, sql, len(ctx.captured_queries), len(response.content)


def p99(values: list[float]) -> float:
    """The 99th percentile (nearest rank): with under 100 requests, the worst one."""
    ranked = sorted(values)
    return ranked[min(len(ranked) - 1, max(0, -(-99 * len(ranked) // 100) - 1))]


def print_line(label: str, wall: list[float], cpu: list[float], sql: list[float],
               queries: int, size: int, gcs: list[float]) -> dict[str, float]:
    """Wall and this process's CPU; SQL is the wall the queries took (their fetch included);
    GC the most this process's collector paused one request."""
    median = statistics.median(wall)
    print(f"{label:<40} median {median:6.1f}  p99 {p99(wall):6.1f}  worst {max(wall):6.1f} ms"
          f"  CPU {statistics.median(cpu):5.1f} p99 {p99(cpu):5.1f}  GC max {max(gcs):5.1f}"
          f"  SQL {statistics.median(sql):5.1f} ms {queries:2d} q {size / 1024:5.0f} KiB"
          f"  n {len(wall)}", flush=True)
    return {"page": label, "p50_ms": round(median, 1), "p99_ms": round(p99(wall), 1),
            "worst_ms": round(max(wall), 1), "cpu_p50_ms": round(statistics.median(cpu), 1),
            "cpu_p99_ms": round(p99(cpu), 1), "gc_max_ms": round(max(gcs), 1),
            "requests": len(wall)}


def profile(c, url: str) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    c.get(url)
    profiler.disable()
    stats = pstats.Stats(profiler).sort_stats(os.environ.get("BENCH_PAGES_SORT", "cumulative"))
    stats.print_stats(25)
    if os.environ.get("BENCH_PAGES_CALLERS"):  # who calls a function the profile names
        stats.print_callers(os.environ["BENCH_PAGES_CALLERS"])


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("store", nargs="?", choices=["postgres"],
                        help="a throwaway PostgreSQL database instead of SQLite")
    parser.add_argument("--stepping", action="store_true",
                        help="time the pages while the engine steps (implies postgres)")
    parser.add_argument("--engine", choices=["celery", "loop"], default="celery")
    parser.add_argument("--profile", metavar="URL", help="a cProfile of one more request")
    parser.add_argument("--partitions", type=int, default=FULL,
                        help=f"about this many partitions, every kind scaled ({FULL:,})")
    parser.add_argument("--profile-slow", metavar="MS", type=float,
                        help="then a round of every page under cProfile: the top functions "
                             "of those over MS of CPU")
    parser.add_argument("--no-freeze", action="store_true",
                        help="leave the loaded heap to the GC (the server before issue 33)")
    parser.add_argument("--json", action="store_true",
                        help="end with one JSON line: every page's p50/p99 and the engine's")
    return parser.parse_args()


def main() -> None:
    args = parse_args()
    gc.callbacks.append(_gc_timer)
    stepping = args.stepping
    postgres = args.store == "postgres" or stepping
    redis_proc = setup(postgres)
    engine: dict[str, subprocess.Popen] = {}
    try:
        from django.db import connection

        from cluster.models import Partition, Topic

        t0 = time.perf_counter()
        if not Partition.objects.exists():
            build(args.partitions)
        print(f"built 200 SPUs, {Topic.objects.count():,} topics, "
              f"{Partition.objects.count():,} partitions in "
              f"{time.perf_counter() - t0:.1f} s ({connection.vendor})")
        c = client()
        if not args.no_freeze:
            freeze = _freeze_loaded()
            if freeze is not None:
                freeze()  # as the server does once loaded (webapp/asgi.py)
        if stepping:
            engine = start_engine(TMP, args.engine)
            print(f"engine started ({'worker + beat' if args.engine == 'celery' else 'tick loop'});"
                  f" two ticks over after "
                  f"{wait_ticks(TMP, engine, 2):.0f} s", flush=True)
            records0 = stored_records()
            redis_slowlog_reset()
            cpu0, since = engine_cpu(engine), datetime.now()
        only = os.environ.get("BENCH_PAGES_ONLY", "")
        huge = Topic.objects.get(name="huge").partitions
        pages = [(label, url) for label, url in pages_for(huge) if only in url]
        if stepping:
            print(f"{'page':<40} (in turn for {WINDOW_S:.0f} s and {RUNS} rounds at least, "
                  f"Django test client; load average {os.getloadavg()[0]:.1f} on "
                  f"{os.cpu_count()} CPUs)", flush=True)
            lines = measure_spread(c, pages, WINDOW_S)
        else:
            print(f"{'page':<40} ({RUNS} runs, Django test client; load average "
                  f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
            lines = [measure(c, label, url) for label, url in pages]
        worst = max(lines, key=lambda line: line["p99_ms"])
        print(f"slowest median {max(line['p50_ms'] for line in lines):.1f} ms; worst p99 "
              f"{worst['p99_ms']:.1f} ms ({worst['page']}); load average "
              f"{os.getloadavg()[0]:.1f}")
        if args.profile_slow is not None:
            slow: dict[str, pstats.Stats] = {}
            end = time.monotonic() + WINDOW_S / 2
            while time.monotonic() < end:
                for _, url in pages:
                    profile_slow(c, url, args.profile_slow, slow)
            for url, stats in slow.items():
                print(f"--- {url}")
                stats.sort_stats("cumulative").print_stats(18)
        report_gc()
        if stepping:
            until, cpu1 = datetime.now(), engine_cpu(engine)
            report_engine(TMP, since, until, {n: cpu1[n] - cpu0[n] for n in engine}, records0)
            report_redis_slowlog()
        if args.json:
            print(json.dumps({"partitions": Partition.objects.count(), "stepping": stepping,
                              "pages": lines}))
        if args.profile:
            profile(c, args.profile)
    finally:
        stop_engine(engine)
        if engine and os.environ.get("BENCH_PAGES_LOGS"):  # the worker's and beat's logs
            for name in engine:
                shutil.copy(TMP / f"{name}.log", Path(os.environ["BENCH_PAGES_LOGS"]))
        if postgres:
            from django.db import connection
            connection.creation.destroy_test_db(connection.settings_dict["NAME"], verbosity=0)
        redis_proc.terminate()
        redis_proc.wait(10)
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == "__main__":
    main()
