"""Benchmark: an acks=1 produce's latency while the engine ticks back to back (issue 36.4).

Builds 50 SPUs and N partitions (topic "bench", replication 3, a simulated producer on
every partition) in a throwaway SQLite database with a private Redis, as
bench_replication_shell.py does, then runs the engine's real tick (``replication_tick``)
back to back in a thread of this process: a single shard whose ticks overrun the 1 s
interval, as at 100,000 partitions. Meanwhile a second process sends ``--produces``
acks=1 writes, one at a time, through the ``produce`` command itself (``call_command``:
its identity check, the lease, the append), each to another partition, and times each
from the call to its answer. Prints the produce latencies (p50, p95, max), how many
ticks began during the slowest produce, and the tick times; ``--json`` prints one object
on stdout instead (other lines on stderr): ``partitions``, ``produces``, ``failed``,
``produce_p50_ms``, ``produce_p95_ms``, ``produce_max_ms``, ``ticks``, ``tick_p50_ms``,
``tick_max_ms``, ``ticks_lost`` (ticks whose save was refused because their lease
lapsed: skipped, as the worker does; not in the tick times), ``ticks_failed`` (ticks
that failed otherwise, such as a Redis command past REDIS_SOCKET_TIMEOUT_S),
``ticks_begun_during_produce_max``, ``first_tick_ms``, ``fair_lease`` (whether this
version's lease is taken in turn), ``load_average`` and
``tick_lease_held_fraction`` (the share of the producer's run the ticks held the lease),
``tick_lease_gap_p50_ms`` (the median stretch between two ticks' holds, where a producer
may take it out of turn) and ``idle_produce_p50_ms``: first, ``--idle-produces`` writes with no tick running, the
floor (what a produce costs by itself).

Bounded: the producer stops after ``--produces`` writes or ``--max-s`` seconds, whichever
comes first, and the ticks stop with it. Asserts nothing about time. Run:
    .venv/bin/python tests/bench/bench_produce_latency.py [--partitions 100000]
        [--produces 30] [--idle-produces 5] [--gap-ms 150] [--max-s 600] [--acks all]
        [--topics N] [--json]
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _django import setup_throwaway_django  # noqa: E402

TOPIC = "bench"


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank ``q`` percentile (0 < q <= 1) of a non-empty list."""
    ranked = sorted(values)
    return ranked[max(0, min(len(ranked) - 1, round(q * len(ranked) + 0.5) - 1))]


def producer(args: argparse.Namespace) -> None:
    """The child: ``--produces`` acks=1 writes through the produce command, one at a time;
    prints one JSON list of {began, ended, partition, error} (wall-clock seconds)."""
    setup_throwaway_django()
    from django.core.management import call_command
    from django.core.management.base import CommandError

    from bench_replication_shell import busy_topics

    rng = random.Random(36)
    deadline = time.monotonic() + args.max_s
    writes = []
    topics = busy_topics(args.partitions, args.topics)
    for _ in range(args.produces):
        if time.monotonic() > deadline:
            break
        if args.topics == 1:
            name, partition = TOPIC, rng.randrange(args.partitions)
        else:  # a topic at random, then one of its partitions
            name, size = rng.choice(topics)
            partition = rng.randrange(size)
        began, reason = time.time(), ""
        try:
            call_command("produce", name, "--partition", str(partition), "--count", "1",
                         "--acks", args.acks, "--json", stdout=io.StringIO())
        except (CommandError, SystemExit) as exc:  # refused or the lease stayed busy
            reason = str(exc)
        writes.append({"began": began, "ended": time.time(), "partition": partition,
                       "error": reason})
        # The next write comes at another point of a tick, not right after this one's.
        time.sleep(rng.uniform(0, 2 * args.gap_ms) / 1000)
    print(json.dumps(writes))


def send_produces(args: argparse.Namespace, count: int, redis_url: str) -> list[dict]:
    """``count`` writes from a child process on the same store and Redis (its Django
    start is not timed): the produce command's own process, not a thread of the ticker's."""
    env = {**os.environ, "REDIS_URL": redis_url}
    child = subprocess.run(
        [sys.executable, __file__, "--producer-child", "--partitions", str(args.partitions),
         "--topics", str(args.topics),
         "--produces", str(count), "--gap-ms", str(args.gap_ms), "--max-s", str(args.max_s),
         "--acks", args.acks],
        env=env, capture_output=True, text=True, timeout=args.max_s + 120)
    if child.returncode != 0:
        raise SystemExit(f"the producer failed:\n{child.stderr[-3000:]}")
    return json.loads(child.stdout.strip().splitlines()[-1])


def record_lease_holds(holds: list[tuple[float, float]]) -> None:
    """Note every stretch this process holds the hot state's leases (the ticks': the
    producer is another process), to tell how much of the time a producer could get in."""
    from cluster.adapters import lease

    taken = lease.held_all

    @contextlib.contextmanager
    def noted(wait_s: float, names: list[str]):  # type: ignore[no-untyped-def]
        with taken(wait_s, names) as leases:
            began = time.time()
            try:
                yield leases
            finally:
                holds.append((began, time.time()))

    lease.held_all = noted


def fair_lease() -> bool:
    from cluster.adapters import lease

    return hasattr(lease, "_TAKE_IN_TURN")


def run(args: argparse.Namespace, result: dict[str, object]) -> None:
    result["acks"] = args.acks
    workdir = setup_throwaway_django()
    from django.conf import settings

    from bench_replication_shell import build, setup_redis, timed
    from cluster.adapters.lease import LeaseLost
    from cluster.services.replication import replication_tick
    from cluster.services.waiting import LocalQueue

    settings.REPLICATION_SIMULATED_PRODUCERS = True
    proc = setup_redis(workdir)
    try:
        ms, _ = timed(lambda: build(args.spus, args.partitions, rate=args.partitions,
                                    topics=args.topics))
        print(f"{args.spus} SPUs, {args.partitions} partitions in {args.topics} topic(s), a "
              f"producer on each (store built in {ms:.0f} ms); fair lease: {fair_lease()}")
        ms, _ = timed(lambda: replication_tick(dispatch=LocalQueue()))
        print(f"first tick (topology sync): {ms:.0f} ms")
        result["first_tick_ms"] = round(ms, 1)
        if args.idle_produces:
            # The floor: the same writes with no tick running (the produce's own cost).
            idle = [(w["ended"] - w["began"]) * 1000
                    for w in send_produces(args, args.idle_produces, settings.REDIS_URL)
                    if not w["error"]]
            result["idle_produce_p50_ms"] = round(statistics.median(idle), 1) if idle else 0
            print(f"acks={args.acks} produce with no tick running: p50 "
                  f"{result['idle_produce_p50_ms']:.0f} ms ({len(idle)} writes)")
        ticks: list[tuple[float, float]] = []
        lost: list[tuple[float, float]] = []  # ticks whose save was refused: lease lapsed
        errors: list[str] = []  # ticks that failed otherwise (a Redis command timed out)
        stop, ticking = threading.Event(), threading.Event()

        failed: list[BaseException] = []

        def ticker() -> None:
            # Back to back, as a worker whose ticks overrun their interval runs them; a
            # tick whose lease lapsed is skipped and counted, as the worker's task does.
            try:
                while not stop.is_set():
                    began = time.time()
                    try:
                        replication_tick(dispatch=LocalQueue())
                    except LeaseLost:
                        lost.append((began, time.time()))
                    except (TimeoutError, redis.exceptions.RedisError) as exc:
                        # Skipped by the worker too (logged); the next tick runs.
                        errors.append(f"{type(exc).__name__}: {exc}")
                    else:
                        ticks.append((began, time.time()))
                    ticking.set()
            except BaseException as exc:  # reported below; the producer is not started
                failed.append(exc)
            finally:
                ticking.set()

        holds: list[tuple[float, float]] = []
        record_lease_holds(holds)
        thread = threading.Thread(target=ticker, name="bench-ticks")
        thread.start()
        ticking.wait()  # the producer starts once the ticks run back to back
        if failed:
            raise failed[0]
        try:
            writes = send_produces(args, args.produces, settings.REDIS_URL)
        finally:
            stop.set()  # the ticks end with the producer, whatever became of it
            thread.join()
        if failed:
            raise failed[0]
        report(writes, ticks, result)
        lease_figures(writes, holds, result)
        result.update(ticks_lost=len(lost), ticks_failed=len(errors))
        lost_ms = ", ".join(f"{(end - began) * 1000:.0f}" for began, end in lost)
        print(f"ticks refused (lease lapsed while the tick worked): {len(lost)}"
              + (f", after {lost_ms} ms" if lost else ""))
        for reason in errors:
            print(f"  tick failed: {reason}")
    finally:
        # A live flush still in flight would log its failure once Redis is gone.
        logging.getLogger("cluster.adapters.live_batches").setLevel(logging.CRITICAL)
        proc.terminate()


def report(writes: list[dict], ticks: list[tuple[float, float]],
           result: dict[str, object]) -> None:
    ok = [w for w in writes if not w["error"]]
    latencies = [(w["ended"] - w["began"]) * 1000 for w in ok]
    tick_ms = [(end - began) * 1000 for began, end in ticks]
    begun = [sum(w["began"] < t < w["ended"] for t, _ in ticks) for w in ok]
    result.update(produces=len(writes), failed=len(writes) - len(ok), ticks=len(ticks),
                  ticks_begun_during_produce_max=max(begun, default=0))
    for name, value in (("produce_p50_ms", statistics.median(latencies) if latencies else 0),
                        ("produce_p95_ms", percentile(latencies, 0.95) if latencies else 0),
                        ("produce_max_ms", max(latencies, default=0)),
                        ("tick_p50_ms", statistics.median(tick_ms) if tick_ms else 0),
                        ("tick_max_ms", max(tick_ms, default=0))):
        result[name] = round(value, 1)
    result["load_average"] = os.getloadavg()[0]
    print(f"acks={result['acks']} produce behind back-to-back ticks: {len(ok)} of {len(writes)} "
          "answered; "
          f"p50 {result['produce_p50_ms']:.0f} ms, p95 {result['produce_p95_ms']:.0f} ms, "
          f"max {result['produce_max_ms']:.0f} ms; ticks begun during one produce: "
          f"at most {result['ticks_begun_during_produce_max']}")
    print(f"ticks: {len(ticks)}, p50 {result['tick_p50_ms']:.0f} ms, "
          f"max {result['tick_max_ms']:.0f} ms")
    for w in writes:
        if w["error"]:
            print(f"  failed: partition {w['partition']}: {w['error']}")
    print(f"load average: {os.getloadavg()}")


def lease_figures(writes: list[dict], holds: list[tuple[float, float]],
                  result: dict[str, object]) -> None:
    """The share of the producer's run the ticks held the lease, and the gaps between two
    ticks' holds (the only moments a producer could take it without a turn)."""
    if not writes or not holds:
        return
    start, end = writes[0]["began"], writes[-1]["ended"]
    held = sum(max(0.0, min(b, end) - max(a, start)) for a, b in holds)
    gaps = [(holds[i + 1][0] - holds[i][1]) * 1000 for i in range(len(holds) - 1)]
    result["tick_lease_held_fraction"] = round(held / max(end - start, 1e-9), 3)
    result["tick_lease_gap_p50_ms"] = round(statistics.median(gaps), 1) if gaps else 0
    print(f"the ticks held the lease {result['tick_lease_held_fraction']:.0%} of the "
          f"producer's run; between two ticks' holds p50 {result['tick_lease_gap_p50_ms']:.0f} "
          f"ms (a produce between them waits for no tick)")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spus", type=int, default=50)
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--produces", type=int, default=30)
    ap.add_argument("--topics", type=int, default=1, metavar="N",
                    help="the partitions split over N topics (bench_replication_shell's "
                         "--topics); each write goes to a topic at random")
    ap.add_argument("--idle-produces", type=int, default=5,
                    help="writes timed first with no tick running, for the floor (0: none)")
    ap.add_argument("--gap-ms", type=float, default=150,
                    help="mean pause between two produces (uniform 0 to twice this)")
    ap.add_argument("--max-s", type=float, default=600,
                    help="the producer stops after this many seconds even if not done")
    ap.add_argument("--acks", choices=["1", "all"], default="1",
                    help="the writes' acks: all waits until the LRS has the record")
    ap.add_argument("--json", action="store_true",
                    help="one JSON object on stdout; the other lines on stderr")
    ap.add_argument("--producer-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.partitions < 1 or args.produces < 1 or args.spus < 3 or args.idle_produces < 0:
        ap.error("--partitions and --produces must be at least 1, --spus at least 3, "
                 "--idle-produces at least 0")
    if args.gap_ms < 0 or args.max_s <= 0:
        ap.error("--gap-ms must be at least 0 and --max-s above 0")
    if not 1 <= args.topics <= args.partitions:
        ap.error("--topics must be between 1 and --partitions")
    if args.producer_child:
        producer(args)
        return
    result: dict[str, object] = {"partitions": args.partitions, "spus": args.spus,
                                 "topics": args.topics}
    with contextlib.redirect_stdout(sys.stderr) if args.json else contextlib.nullcontext():
        run(args, result)
        result["fair_lease"] = fair_lease()
    if args.json:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
