"""Benchmark of the save's compaction and encoding loop alone (save_encoding.compact_and_encode):
N steady sets, every one appended to at every tick, no Redis and no store.

The busy tick's largest part at 100,000 partitions (``bench_replication_shell.py --parts``)
measured apart from everything else, so a change to the loop (or the columnar tier that
would replace it) can be compared without Redis's and the database's noise. Each step is
the producers' append (1 record a set), the fetch round, then the loop, GC paused as the
save pauses it; prints the CPU of each, per step. ``--spu-down``: SPU 0 offline first (an
outage rehearsal: its sets keep that replica out of the LRS). ``--rows``: the loop of a save that
writes steady sets in rows (cluster/adapters/status_rows.py), and the building of its
rows' pieces (``rows``). ``--figures-rows``: not the product's loop but the one a columnar
row would need (tests/bench/_figures_rows.py, a design measurement; ``bare``: without the
summaries too). Asserts nothing about time. Run:
    .venv/bin/python tests/bench/bench_save_loop.py [--partitions 100000] [--steps 8]
        [--topics N] [--rows [--read-back]] [--spu-down] [--figures-rows {summed,bare}]
        [--json]
"""
from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import setup_throwaway_django  # noqa: E402
from bench_replication_core import replica_map  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--spus", type=int, default=50)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    ap.add_argument("--rows", action="store_true",
                    help="steady sets in rows (status_rows.py), the rows' pieces timed too")
    ap.add_argument("--topics", type=int, default=1, metavar="N",
                    help="the partitions split over N topics (a block a topic when they are "
                         "small: what a cluster of many topics costs the save)")
    ap.add_argument("--spu-down", action="store_true",
                    help="SPU 0 offline before the timed steps (an outage rehearsal's ticks: "
                         "the sets with a replica there keep it out of the LRS)")
    ap.add_argument("--read-back", action="store_true",
                    help="with --rows: then read every set back through its field and row, "
                         "timed, against the same rows holding statuses (tests/bench/"
                         "_read_back.py); exits 1 if a set reads other than encode_status")
    ap.add_argument("--figures-rows", choices=("summed", "bare"), default=None,
                    help="time the loop a row of figures would need instead of the save's "
                         "(tests/bench/_figures_rows.py: a design measurement)")
    args = ap.parse_args(argv)
    if args.read_back and not args.rows:
        ap.error("--read-back reads the rows back: it needs --rows")
    if args.figures_rows and (args.rows or args.spu_down):
        ap.error("--figures-rows times steady sets alone: no --rows or --spu-down")
    if args.partitions < 1 or args.steps < 1 or args.spus < 3:
        ap.error("--partitions and --steps must be at least 1, --spus at least 3")
    if not 1 <= args.topics <= args.partitions:
        ap.error("--topics must be between 1 and --partitions")
    setup_throwaway_django()
    from _figures_rows import figures_rows
    from _read_back import read_back
    from cluster.adapters import redis_keys, save_pieces, set_records, shards
    from cluster.adapters.hot_records import values_key
    from cluster.adapters.save_encoding import compact_and_encode as _compact_and_encode
    from cluster.adapters.hot_types import HotState
    from cluster.core.replication import (SpuOffline, add_topic, handle, new_cluster,
                                          produce_spread, replication_step, run_elections)

    state = new_cluster(range(args.spus))
    tables = {}
    for i in range(args.topics):
        name = "bench" if args.topics == 1 else f"bench-{i}"
        size = args.partitions // args.topics + (i < args.partitions % args.topics)
        add_topic(state, name, replica_map(args.spus, size))
        tables[name] = {"pk": i + 1, "partitions": list(range(size)), "rate": 1.0}
    now = 1000
    replication_step(state, now)
    keys, counts = list(state.replica_sets), [1] * args.partitions
    hot = HotState(state, tables if args.topics > 1 else {})
    ms: dict[str, list[float]] = {"producers": [], "round": [], "loop": []}
    if args.rows:
        ms["rows"] = []
    with redis_keys.bound_to_store("bench"):  # key names only: no Redis is reached
        # Warm: every set encoded once (packed whole), then a step untimed, whose encoding
        # builds the templates (steady_codec: a set's second encoding since it joined).
        fields: dict = {}  # each set's field as last written (--read-back)
        _note_fields(fields, _compact_and_encode(hot, None, set_records.Writes()))
        state.steady.mark()
        warm = 1
        if args.spu_down:  # its sets leave the index, rejoin, then take templates: two steps
            handle(state, SpuOffline(0))
            run_elections(state, now, set())
            warm = 3
        for step in range(args.steps + warm):
            hot.after = {}  # a unit's own, as each unit of work starts with
            gc.collect()
            gc.disable()
            try:
                t0 = time.process_time()
                now += 1000
                replication_step(state, now)
                t1 = time.process_time()
                produce_spread(state, keys, counts, 1, lost=frozenset())
                t2 = time.process_time()
                if args.figures_rows:
                    written = figures_rows(hot, shards.BLOCK,
                                           summaries=args.figures_rows == "summed")
                else:
                    encoded = _compact_and_encode(hot, None, set_records.Writes(),
                                                  rows=args.rows)
                    written = len(encoded.every_key)
                    if args.read_back:
                        _note_fields(fields, encoded)
                t3 = time.process_time()
                if args.rows:
                    state.steady.mark()  # as the unit's log entries mark it
                    save_pieces.row_pieces(encoded.rows, encoded.row_records, hot.raw,
                                           hot.rowed, encoded.released, values_key,
                                           lambda _: True)
                t4 = time.process_time()
            finally:
                gc.enable()
            if step < warm:
                continue
            ms["round"].append(1000 * (t1 - t0))
            ms["producers"].append(1000 * (t2 - t1))
            ms["loop"].append(1000 * (t3 - t2))
            if args.rows:
                ms["rows"].append(1000 * (t4 - t3))
            if written != args.partitions:
                raise SystemExit(f"the loop encoded {written} sets, not "
                                 f"{args.partitions}: not every set was appended to")
        read: dict = {}
        if args.read_back:  # one more save, its rows kept whole
            now += 1000
            replication_step(state, now)
            produce_spread(state, keys, counts, 1, lost=frozenset())
            hot.after = {}
            encoded = _compact_and_encode(hot, None, set_records.Writes(), rows=True)
            state.steady.mark()
            _note_fields(fields, encoded)
            rows: dict = {}
            for block in list(encoded.rows.dirty):
                rows.setdefault(block[0], {})[str(block[1])] = encoded.rows.row(
                    block, hot.raw, hot.rowed)
            read = read_back(hot, fields, rows)
            if read["read_back_wrong"]:
                raise SystemExit(f"{read['read_back_wrong']} sets read back other than "
                                 "encode_status gives")
    result = {"partitions": args.partitions, "topics": args.topics, "steps": args.steps,
              "rows": args.rows,
              "spu_down": args.spu_down, "figures_rows": args.figures_rows,
              **{f"{name}_cpu_ms": round(statistics.median(v), 1) for name, v in ms.items()},
              "loop_cpu_ms_each": [round(v, 1) for v in ms["loop"]], **read}
    if args.json:
        print(json.dumps(result))
        return
    for name, values in ms.items():
        print(f"{name:10s} median {statistics.median(values):7.1f} ms CPU  (min "
              f"{min(values):.1f}, max {max(values):.1f}; {args.partitions:,} sets, "
              f"{args.steps} steps)")
    if read:
        print(f"read back {read['read_back_cpu_ms']:7.1f} ms CPU from the rows "
              f"({read['read_back_figured']:,} sets as figures), "
              f"{read['read_back_statuses_cpu_ms']:.1f} ms from the same rows as statuses")


def _note_fields(fields: dict, encoded) -> None:
    """The fields a save wrote (the anchors its rows' entries name)."""
    for topic, changed in encoded.changed.items():
        for name, data in changed.items():
            fields[(topic, int(name))] = data


if __name__ == "__main__":
    main()
