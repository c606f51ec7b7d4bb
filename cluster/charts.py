"""Plotly figure builders: plain dicts in Plotly's figure schema.

Dicts rather than plotly.graph_objects because validating a 200 x 200 matrix
through graph_objects costs more than the page budget; a test checks every
builder's output with ``plotly.graph_objects.Figure`` instead.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

from cluster.selectors.stats import ClusterStats, SpuStats

# Light for zero, dark for many: read as "more load here" at a glance. Explicit
# stops because plotly.js's named "Blues" runs dark-to-light.
SCALE = [[0.0, "#f2f7fc"], [0.5, "#6aaed6"], [1.0, "#08306b"]]
FAILOVER_SCALE = [[0.0, "#fff5eb"], [0.5, "#fd8d3c"], [1.0, "#a63603"]]
# An SPU that serves nothing: outside both scales, so it never reads as load.
DOWN_COLOUR = "#6e7781"
NO_LEADER = "none left"
# Numbers inside cells stay legible up to about this many cells.
MAX_LABELLED_CELLS = 900


class Figure(TypedDict):
    data: list[dict[str, Any]]
    layout: dict[str, Any]


def _layout(title: str, x_title: str, y_title: str, rows: int,
            **extra: Any) -> dict[str, Any]:
    return {"title": {"text": title, "x": 0}, "height": max(260, 120 + 22 * rows),
            "margin": {"l": 90, "r": 20, "t": 50, "b": 60},
            "xaxis": {"title": {"text": x_title}, "type": "category", "automargin": True},
            "yaxis": {"title": {"text": y_title}, "type": "category", "autorange": "reversed",
                      "automargin": True},
            **extra}


def rack_spu_heatmap(racks: Mapping[str, Sequence[SpuStats]], metric: str) -> Figure:
    """Rows are racks and columns the SPUs in them, as 000's Stage 1 matrix.

    An SPU that serves nothing (offline, never connected, loop killed) is no cell of the
    load scale: its replicas are not served, and drawn as load it looked like the busiest
    SPU. It is a grey cell of a trace of its own that says why.
    """
    width = max((len(spus) for spus in racks.values()), default=0)
    z, text, custom, down, down_text = [], [], [], [], []
    for spus in racks.values():
        pad = width - len(spus)
        z.append([None if s.down else getattr(s, metric) for s in spus] + [None] * pad)
        text.append([f"SPU {s.id}" for s in spus] + [""] * pad)
        custom.append([[s.id, s.leaders, s.followers, s.replicas, s.state_label or "online"]
                       for s in spus] + [[None] * 5] * pad)
        down.append([1 if s.down else None for s in spus] + [None] * pad)
        down_text.append([f"SPU {s.id}<br>{s.state_label.upper()}" if s.down else ""
                          for s in spus] + [""] * pad)
    label = "leaders" if metric == "leaders" else "followers"
    trace = {"type": "heatmap", "z": z, "x": [f"#{i + 1}" for i in range(width)],
             "y": list(racks), "text": text, "customdata": custom,
             "texttemplate": "%{text}<br>%{z}", "colorscale": SCALE, **_range(z),
             "colorbar": {"title": {"text": label}}, "xgap": 2, "ygap": 2,
             "hoverongaps": False,
             "hovertemplate": "%{y}, SPU %{customdata[0]}<br>leaders %{customdata[1]}"
                              "<br>followers %{customdata[2]}<br>replicas %{customdata[3]}"
                              "<extra></extra>"}
    data = [trace]
    if any(v for row in down for v in row):
        data.append(_down_trace(down, down_text, custom, list(racks), width))
    return {"data": data, "layout": _layout(
        f"SPU {label} by rack", "SPU slot in rack", "rack", len(racks))}


def _down_trace(z: list[list[int | None]], text: list[list[str]], custom: list[list[Any]],
                racks: list[str], width: int) -> dict[str, Any]:
    """The SPUs that serve nothing, in grey with their state written in the cell."""
    return {"type": "heatmap", "name": "not serving", "z": z, "text": text,
            "customdata": custom, "x": [f"#{i + 1}" for i in range(width)], "y": racks,
            "texttemplate": "%{text}", "textfont": {"color": "#ffffff"},
            "colorscale": [[0.0, DOWN_COLOUR], [1.0, DOWN_COLOUR]], "showscale": False,
            "zmin": 0, "zmax": 1, "zauto": False, "xgap": 2, "ygap": 2, "hoverongaps": False,
            "hovertemplate": "%{y}, SPU %{customdata[0]}: %{customdata[4]}<br>"
                             "%{customdata[3]} replicas held, none served<extra></extra>"}


def spu_label(spu_id: int, state: str = "") -> str:
    """An axis label: the SPU, and its state when it serves nothing."""
    return f"SPU {spu_id}" if not state else f"SPU {spu_id} ({state})"


def topic_spu_heatmap(topics: Sequence[str], spu_ids: Sequence[int],
                      counts: Mapping[tuple[int, int], int],
                      topic_ids: Sequence[int],
                      states: Mapping[int, str] | None = None) -> Figure:
    """``states`` names the SPUs that serve nothing (offline, loop killed) in their label."""
    states = states or {}
    z = [[counts.get((tid, spu), 0) for spu in spu_ids] for tid in topic_ids]
    trace = {"type": "heatmap", "z": z, "x": [spu_label(s, states.get(s, "")) for s in spu_ids],
             "y": list(topics), "colorscale": SCALE, **_range(z), "xgap": 1, "ygap": 1,
             **_labels(len(topics) * len(spu_ids)),
             "colorbar": {"title": {"text": "replicas"}},
             "hovertemplate": "topic %{y}<br>%{x}<br>replicas %{z}<extra></extra>"}
    return {"data": [trace], "layout": _layout(
        "Replicas per topic and SPU", "SPU", "topic", len(topics))}


def failover_heatmap(stats: ClusterStats) -> Figure:
    """Row: the SPU that fails; column: who inherits its leaders (next LRS replica)."""
    spu_ids = sorted(stats.spus)
    takers: list[int | None] = [*spu_ids, None]
    z = [[stats.failover.get(failed, {}).get(taker, 0) or None for taker in takers]
         for failed in spu_ids]
    states = {s.id: s.state_label for s in stats.spus.values()}
    trace = {"type": "heatmap", "z": z, "x": [_taker(t) for t in takers],
             "y": [spu_label(s, states.get(s, "")) for s in spu_ids],
             "colorscale": FAILOVER_SCALE, **_range(z),
             "xgap": 1, "ygap": 1, "hoverongaps": False,
             **_labels(len(spu_ids) * len(takers)),
             "colorbar": {"title": {"text": "leaders moved"}},
             "hovertemplate": "if %{y} fails<br>%{x} takes %{z} of its leaders"
                              "<extra></extra>"}
    return {"data": [trace], "layout": _layout(
        "Failover: who takes over each SPU's leaders", "takes over", "failed SPU",
        len(spu_ids))}


def _range(z: list[list[int | None]]) -> dict[str, Any]:
    """Colour from zero: the scale should show load, not the spread between SPUs."""
    top = max((v for row in z for v in row if v is not None), default=0)
    return {"zmin": 0, "zmax": max(top, 1), "zauto": False}


def _labels(cells: int) -> dict[str, Any]:
    return {"texttemplate": "%{z}"} if cells <= MAX_LABELLED_CELLS else {}


def _taker(spu: int | None) -> str:
    return f"SPU {spu}" if spu is not None else NO_LEADER


PLOTLY_CONFIG: dict[str, Any] = {
    "displaylogo": False, "responsive": True,
    "toImageButtonOptions": {"format": "png", "scale": 2},
    "modeBarButtonsToRemove": ["select2d", "lasso2d"],
}
