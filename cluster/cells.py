"""The cells pages and live messages show for an SPU: skew, share and status, coloured by
how far they lie from what the cluster can reach.

Shared by the pages (cluster/views) and the live projection (cluster/projections/live.py)
that sends the same cells to open pages, so the rule stays in one place; it lives beside
charts.py rather than among the views, so the projection imports no view (issue 32's
layers).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from cluster.selectors.stats import EvenRange, SpuStats

SKEW_WARN, SKEW_BAD = 0.10, 0.20


@dataclass(frozen=True)
class Cell:
    text: str
    css: str = ""


def skew_cell(value: float | None, count: int | None = None,
              best: EvenRange | None = None) -> Cell:
    """(count - avg) / avg as text; coloured by how far ``count`` lies outside ``best``,
    the range the cluster can reach (every SPU within one of the average), amber from
    10% of the average and red from 20% (one off the range is amber at most). Without
    ``best``, by the skew itself."""
    if value is None:
        return Cell("–", "muted")
    size = round(abs(value), 9)  # 2 / (5/3) - 1 must count as 20%, not 19.999…%
    if best is not None and count is not None:
        size = round(best.beyond(count), 9)
        if size >= SKEW_BAD and count in (best.low - 1, best.high + 1):
            size = SKEW_WARN  # one replica off the even spread is a nudge, never an alarm
    css = "skew-bad" if size >= SKEW_BAD else "skew-warn" if size >= SKEW_WARN else "skew-ok"
    return Cell(f"{value:+.0%}", css)


def share_cell(value: float | None) -> Cell:
    if value is None:
        return Cell("–", "muted")
    css = "skew-ok" if value >= 0.9 else "skew-warn" if value >= 0.5 else "skew-bad"
    return Cell(f"{value:.0%}", css)


def status_cell(spu: SpuStats) -> Cell:
    """``spu-down`` when the SPU serves nothing: the row turns grey, says why, and offers
    Bring online instead of Take offline / Kill loop (static/js/live.js patches it live)."""
    if not spu.down:
        return Cell("", "spu-up")
    held = f"{spu.replicas} replica{'' if spu.replicas == 1 else 's'} not served"
    return Cell(f"{spu.state_label} · {held}", "spu-down")


def racks_down(spus: Iterable[SpuStats]) -> set[str]:
    """Racks with an SPU that serves nothing: only they are offered "Rack online"."""
    return {s.rack for s in spus if s.rack and s.down}


def spu_row(spu: SpuStats) -> dict[str, object]:
    """The cells pages (and live messages) show for one SPU."""
    leader_skew = skew_cell(spu.leader_skew, spu.leaders, spu.leader_range)
    if spu.down:  # it cannot lead: its leader count says nothing about balance
        leader_skew = Cell(leader_skew.text, "muted")
    return {"spu": spu, "status": status_cell(spu), "leader_skew": leader_skew,
            "replica_skew": skew_cell(spu.replica_skew, spu.replicas, spu.replica_range),
            "preferred_share": share_cell(spu.preferred_share)}
