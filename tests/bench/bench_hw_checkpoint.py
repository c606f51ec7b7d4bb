"""Benchmark of the engine's HW checkpoints (history/checkpoints.py) on a busy cluster:
every partition's offsets move at every unit, a unit a second, as a busy tick's do.

The hook alone, called as the engine's commit calls it, with N partitions' summaries and
no Redis (the log's head is stubbed). Prints the CPU of the first unit (a fresh process's:
every partition) and of the units after it: most write nothing, and the first unit of
each slot writes that slot's partitions (``SLOTS`` of them an interval). Before round 16
the whole cluster's offsets were written at one unit an interval, the first unit's
figure. Asserts nothing about time. Run:
    .venv/bin/python tests/bench/bench_hw_checkpoint.py [--partitions 100000] [--units 30]
        [--interval 300] [--json]
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _django import setup_throwaway_django  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--partitions", type=int, default=100_000)
    ap.add_argument("--units", type=int, default=30, help="units after the first, a second apart")
    ap.add_argument("--interval", type=float, default=300.0,
                    help="HISTORY_HW_INTERVAL_S, seconds")
    ap.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = ap.parse_args(argv)
    if args.partitions < 1 or args.units < 1 or args.interval <= 0:
        ap.error("--partitions and --units must be at least 1, --interval above 0")
    setup_throwaway_django()
    from django.conf import settings

    from cluster.adapters import metadata_log
    from cluster.adapters.set_codec import Summary
    from cluster.core.replication import Resolution
    from history import checkpoints
    from cluster.core.replication.steady import Steady

    # The log's head and stream, as one Redis would answer them all along.
    metadata_log.head = lambda: 40  # type: ignore[assignment]
    metadata_log.stream_key = lambda: "log"  # type: ignore[assignment]
    settings.HISTORY_HW_INTERVAL_S = args.interval
    keys = [("bench", p) for p in range(args.partitions)]
    hook = checkpoints.HwCheckpoints()
    hot = SimpleNamespace(differs=keys, moved=[], topics={"bench": {"partitions": keys}},
                          state=SimpleNamespace(replica_sets=dict.fromkeys(keys),
                                                steady=Steady()))

    def summary(hw: int) -> Summary:
        return Summary(0, (0, 1, 2), Resolution.ONLINE, hw, hw + 1,
                       ((0, hw + 1, hw), (1, hw, hw), (2, hw, hw)))

    cpu_ms, written = [], []
    for second in range(1_000, 1_000 + args.units + 1):
        after = {k: summary(second) for k in keys}
        t0 = time.process_time()
        out = hook(hot, after, at=second * 1000, writes_entries=False)
        cpu_ms.append(1000 * (time.process_time() - t0))
        written.append(sum(len(e["topics"]["bench"]) > 0 for e in out))
    rest = cpu_ms[1:]
    writing = [ms for ms, n in zip(rest, written[1:]) if n]
    result = {"partitions": args.partitions, "units": args.units, "interval_s": args.interval,
              "first_unit_cpu_ms": round(cpu_ms[0], 1),
              "unit_cpu_ms_median": round(statistics.median(rest), 1),
              "unit_cpu_ms_max": round(max(rest), 1),
              "units_cpu_ms_total": round(sum(rest), 1),
              "units_writing": len(writing)}
    if args.json:
        print(json.dumps(result))
        return
    print(f"{args.partitions:,} partitions, every one moving at every unit, a unit a second, "
          f"interval {args.interval:g} s")
    print(f"first unit (every partition)   {cpu_ms[0]:8.1f} ms CPU")
    print(f"the next {args.units} units           median {statistics.median(rest):.1f} ms, "
          f"max {max(rest):.1f} ms, {sum(rest):.0f} ms in all; {len(writing)} of them wrote "
          f"partitions")


if __name__ == "__main__":
    main()
