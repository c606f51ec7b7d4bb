"""CPU per part of the busy ticks, for the benchmarks: named functions of the tick are
wrapped (as module or class attributes, where the tick looks them up) so each adds its
``time.process_time`` to the part it stands for, while enabled. ``enable``/``disable`` as a
cProfile.Profile (the benchmark brackets each tick it measures); each enabled stretch is one
tick's figures. Unlike a profiler it costs two clock reads a call, and it names what a
closing note quotes: the parts that add up to a tick. Nested parts are counted in their
own line and in their caller's (the save holds the encoding loop and the pieces' writes)."""
from __future__ import annotations

import functools
import statistics
import time
from collections import Counter
from typing import Any


def _parts() -> list[tuple[object, str, str]]:
    from cluster.adapters import hot_save, lease, live_batches, save_pieces
    from cluster.engine import mirror, unit
    from cluster.services import replication
    return [
        (replication, "adopt_topology", "adopt the log's intents"),
        (replication, "run_spu_loops", "SPU loops (the fetch round)"),
        (replication, "simulate_producers", "simulated producers"),
        (unit, "_commit", "commit (elections, save, projections)"),
        (hot_save, "compact_and_encode", "  save: compaction and encoding loop"),
        (hot_save, "_pieces", "  save: pieces' statuses and records"),
        (save_pieces, "packed_op", "    of which the scripts' args (slices)"),
        (save_pieces, "row_pieces", "  save: rows' pieces"),
        (hot_save, "_meta_ops", "  save: the meta's texts"),
        (lease, "fenced_write", "  save: fenced writes (redis-py)"),
        (unit, "changes", "  log: changed statuses"),
        (mirror.OffsetsMirror, "reserve", "  mirror: reservations"),
        (unit, "_project", "  projections"),
        (mirror.OffsetsMirror, "offsets", "    of which the offsets mirror"),
        (live_batches, "_stage_changed", "    of which the live pages' staging"),
    ]


class Parts:
    def __init__(self) -> None:
        self.on = False
        self.current: Counter[str] = Counter()
        self.ticks: list[Counter[str]] = []
        self.names: list[str] = []
        for owner, attr, name in _parts():
            self.names.append(name)
            setattr(owner, attr, self._wrapped(getattr(owner, attr), name))

    def _wrapped(self, fn: Any, name: str) -> Any:
        current = self.current

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            if not self.on:
                return fn(*args, **kwargs)
            started = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                current[name] += time.process_time() - started
        return timed

    def enable(self) -> None:
        self.current.clear()
        self.on = True

    def disable(self) -> None:
        self.on = False
        self.ticks.append(Counter(self.current))

    def medians_ms(self) -> dict[str, float]:
        return {name.strip(): round(1000 * statistics.median(t[name] for t in self.ticks), 1)
                for name in self.names if self.ticks}

    def report(self) -> str:
        lines = ["--- CPU per part of the ticks with producers (ms: median, then each tick) ---"]
        for name in self.names:
            each = [1000 * t[name] for t in self.ticks]
            if self.ticks:
                lines.append(f"{name:45s} {statistics.median(each):7.1f}   "
                             + " ".join(f"{v:6.0f}" for v in each))
        return "\n".join(lines)
