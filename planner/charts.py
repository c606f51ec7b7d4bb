"""Plotly figures of the workbench: before/after heatmaps and the grid's scatter.

Each before/after pair shares one colour range, so the same shade means the
same count on both sides.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from cluster.charts import SCALE, Figure
from planner import core
from planner.core.loads import SpuLoad, spu_loads, topic_spu_replicas

NO_RACK = "(no rack)"
MAX_TOPICS = 60


class Side(NamedTuple):
    """One side of the comparison: its layout and the SPUs that exist there."""
    title: str
    layout: Mapping[str, core.ReplicaMap]
    spus: frozenset[int]


def racks_of(spus: Sequence[core.Spu]) -> dict[str, list[int]]:
    racks: dict[str, list[int]] = {}
    for spu in sorted(spus, key=lambda s: (s.rack is None, s.rack or "", s.id)):
        racks.setdefault(spu.rack or NO_RACK, []).append(spu.id)
    return racks


def rack_spu_pair(racks: Mapping[str, list[int]], sides: Sequence[Side],
                  metric: str) -> list[Figure]:
    """Rack x SPU slot, one figure per side; an SPU absent on a side is a blank cell."""
    loads = [spu_loads(side.layout) for side in sides]
    top = max((getattr(l, metric) for ld in loads for l in ld.values()), default=0)
    return [_rack_figure(racks, side, load, metric, top) for side, load in zip(sides, loads)]


def _rack_figure(racks: Mapping[str, list[int]], side: Side, loads: Mapping[int, SpuLoad],
                 metric: str, top: int) -> Figure:
    width = max((len(ids) for ids in racks.values()), default=0)
    z, text = [], []
    for ids in racks.values():
        pad = width - len(ids)
        z.append([getattr(loads.get(i, SpuLoad(0, 0)), metric) if i in side.spus else None
                  for i in ids] + [None] * pad)
        text.append([f"SPU {i}" if i in side.spus else f"SPU {i} (absent)" for i in ids]
                    + [""] * pad)
    trace = {"type": "heatmap", "z": z, "x": [f"#{i + 1}" for i in range(width)],
             "y": list(racks), "text": text, "texttemplate": "%{text}<br>%{z}",
             "colorscale": SCALE, "zmin": 0, "zmax": max(top, 1), "zauto": False,
             "xgap": 2, "ygap": 2, "hoverongaps": False,
             "colorbar": {"title": {"text": metric}},
             "hovertemplate": "%{y}, %{text}<br>" + metric + " %{z}<extra></extra>"}
    return {"data": [trace], "layout": _layout(f"{side.title}: {metric} by rack",
                                               "SPU slot in rack", "rack", len(racks))}


def topic_spu_pair(spu_ids: Sequence[int], sides: Sequence[Side]) -> list[Figure]:
    """Topic x SPU replicas, the largest topics first, one figure per side."""
    counts = [topic_spu_replicas(side.layout) for side in sides]
    sizes = {name: len(m) for name, m in sides[0].layout.items()}
    topics = sorted(sizes, key=lambda n: (-sizes[n], n))[:MAX_TOPICS]
    top = max((n for c in counts for row in c.values() for n in row.values()), default=0)
    figures = []
    for side, per_topic in zip(sides, counts):
        z = [[per_topic.get(t, {}).get(s, 0) if s in side.spus else None for s in spu_ids]
             for t in topics]
        trace = {"type": "heatmap", "z": z, "x": [f"SPU {s}" for s in spu_ids], "y": topics,
                 "colorscale": SCALE, "zmin": 0, "zmax": max(top, 1), "zauto": False,
                 "xgap": 1, "ygap": 1, "hoverongaps": False,
                 **({"texttemplate": "%{z}"} if len(topics) * len(spu_ids) <= 900 else {}),
                 "colorbar": {"title": {"text": "replicas"}},
                 "hovertemplate": "topic %{y}<br>%{x}<br>replicas %{z}<extra></extra>"}
        figures.append({"data": [trace], "layout": _layout(
            f"{side.title}: replicas per topic and SPU", "SPU", "topic", len(topics))})
    return figures


def grid_scatter(rows: Sequence[Mapping[str, Any]]) -> Figure:
    """Moves against the balance reached, ours and Kafka --generate's, per scenario."""
    ok = [r for r in rows if not r.get("error")]
    ours = _points(ok, lambda r: r, "this planner", "circle")
    kafka = _points([r for r in ok if r.get("kafka")], lambda r: r["kafka"],
                    "Kafka --generate", "x")
    return {"data": [ours, kafka], "layout": {
        "title": {"text": "Replicas moved against balance reached (click a point to pick it)",
                  "x": 0}, "height": 420, "margin": {"l": 70, "r": 20, "t": 50, "b": 60},
        "xaxis": {"title": {"text": "replicas moved"}, "rangemode": "tozero"},
        "yaxis": {"title": {"text": "replica spread after (max - min per SPU)"},
                  "rangemode": "tozero"}}}


def _points(rows: Sequence[Mapping[str, Any]], metrics: Any, name: str,
            symbol: str) -> dict[str, Any]:
    return {"type": "scatter", "mode": "markers", "name": name,
            "x": [metrics(r)["replicas_moved"] for r in rows],
            "y": [metrics(r)["replica_spread"] for r in rows],
            "text": [r["scenario"] for r in rows], "customdata": [r["index"] for r in rows],
            "marker": {"symbol": symbol, "size": 9},
            "hovertemplate": "%{text}<br>moved %{x}, spread %{y}<extra>" + name + "</extra>"}


def _layout(title: str, x_title: str, y_title: str, rows: int) -> dict[str, Any]:
    return {"title": {"text": title, "x": 0}, "height": max(260, 120 + 22 * rows),
            "margin": {"l": 90, "r": 20, "t": 50, "b": 60},
            "xaxis": {"title": {"text": x_title}, "type": "category", "automargin": True},
            "yaxis": {"title": {"text": y_title}, "type": "category", "autorange": "reversed",
                      "automargin": True}}
