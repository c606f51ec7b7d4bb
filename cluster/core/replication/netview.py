"""What the pages show of the network: the link matrix and the rehearsal's summary.

Pure, so the same view is rendered by the page, sent in live messages (the
unit of work publishes it when ``mark`` changes) and answered by the live
snapshot a page resyncs from (docs/network-partitions.md).
"""
from __future__ import annotations

from typing import Any

from . import ledger
from .reach import CONTROLLER, PRODUCERS, blocked
from .links import cut_fields
from .state import ClusterState

# Past this many SPUs the matrix lists only the SPUs a cut names or whose session expired.
FULL_MATRIX_UP_TO = 24
# Truncated acks=1 writes the summary names one by one (the report has them all).
NAMED = 10


def matrix(state: ClusterState) -> dict[str, Any]:
    """Who reaches whom: one row per SPU, a cell per other end (controller, producers,
    every SPU): ``ok``, ``cut`` (both ways), ``out-cut`` (what it sends is dropped),
    ``in-cut`` (what it is sent is dropped) or ``self``."""
    spus = sorted(state.spus)
    ends: list[Any] = [CONTROLLER, PRODUCERS, *spus]
    shown = spus
    if len(spus) > FULL_MATRIX_UP_TO:
        # Every other row is all "ok": a big cluster's matrix (and message) stays small.
        named = {s for c in state.cuts for s in (*c.spus, *c.peers)} | set(state.expired)
        shown = [s for s in spus if s in named]
    rows = [{"spu": s, "expired": s in state.expired,
             "cells": [_cell(state, s, end) for end in ends]} for s in shown]
    return {"ends": [str(e) for e in ends], "rows": rows, "all_rows": shown == spus,
            "cuts": [cut_fields(c) for c in state.cuts]}


def _cell(state: ClusterState, spu: int, end: Any) -> str:
    if end == spu:
        return "self"
    out, back = blocked(state, spu, end), blocked(state, end, spu)
    return "cut" if out and back else "out-cut" if out else "in-cut" if back else "ok"


def summary(report: dict[str, Any] | None) -> dict[str, Any] | None:
    """The report's counts, small enough for every live message (no record lists)."""
    if report is None:
        return None
    keys = ("settled", "acknowledged_kept", "acks1_truncated_count", "unacknowledged_lost",
            "refused_total", "capped", "counts_complete")
    return {**{k: report[k] for k in keys if k in report},
            "acks1_truncated": report["acks1_truncated"][:NAMED]}


def view(state: ClusterState, now: int) -> dict[str, Any]:
    """The live ``net`` payload: the matrix and the latest rehearsal's summary."""
    return {**matrix(state), "report": summary(ledger.report(state, now))}


def mark(state: ClusterState) -> tuple[Any, ...]:
    """Changes whenever ``view`` would (cheap: read before and after every unit of work)."""
    r = state.rehearsal
    if r is None:
        counts: Any = None
    elif "settled" in r:
        counts = ("settled", r["healed_ms"])
    else:
        counts = (tuple(r["acked"].values()), len(r["truncated"]), len(r["acks1"]),
                  sum(r["refused"].values()), len(r["leaderless_since"]), r["healed_ms"],
                  r.get("acks1_committed", 0))
    return (tuple(c.id for c in state.cuts), tuple(sorted(state.expired)),
            tuple(sorted(state.spus)), counts)
