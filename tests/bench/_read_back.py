"""The read side of the save loop's bench (``bench_save_loop.py --read-back``): every set
read back as a load reads it, through ``status_rows.overlay`` from its field and its
block's row, timed; then the same rows with each entry its status (as rows were before
round 24's figures entries), timed too. Every set must read as ``encode_status`` of it,
from either: a check at the bench's size of what the rows test checks on the schedules."""
from __future__ import annotations

import time
from typing import Any

from cluster.adapters import status_rows
from cluster.adapters.hot_types import HotState
from cluster.adapters.set_codec import encode_status


def read_back(hot: HotState, fields: dict[Any, bytes], rows: dict[str, dict[str, bytes]]
              ) -> dict[str, Any]:
    """``fields``: each set's field as last written; ``rows``: by topic, the rows the last
    save wrote. Returns the CPU of each read (ms) and the sets that read wrong."""
    stored = list(fields.items())
    t0 = time.process_time()
    read = dict(status_rows.overlay(stored, rows))
    t1 = time.process_time()
    as_statuses = {topic: {name: _with_statuses(topic, row, read) for name, row in blocks.items()}
                   for topic, blocks in rows.items()}
    t2 = time.process_time()
    again = dict(status_rows.overlay(stored, as_statuses))
    t3 = time.process_time()
    clock = hot.state.steady.round_ms
    wrong = []
    for key, rs in hot.state.replica_sets.items():
        ref = rs.replica[rs.leader]  # type: ignore[index]
        want = encode_status(rs, ref, steady=key in hot.state.steady.keys, lrs_clock=clock)[0]
        if read.get(key) != want or again.get(key) != want:
            wrong.append(key)
    figured = sum(type(v) is tuple for v in hot.raw.values())
    return {"read_back_cpu_ms": round(1000 * (t1 - t0), 1),
            "read_back_statuses_cpu_ms": round(1000 * (t3 - t2), 1),
            "read_back_figured": figured, "read_back_wrong": len(wrong)}


def _with_statuses(topic: str, row: bytes, read: dict[Any, bytes]) -> bytes:
    entries = list(status_rows.entries(row))
    return status_rows.row_of([status_rows.HEAD.pack(p, anchored) for p, anchored, _ in entries],
                              [read[(topic, p)] for p, _, _ in entries])
