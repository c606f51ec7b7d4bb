"""The self-healing page's settings, one field each with its unit (presentation only: the
names, types and bounds are healing/core/model.py's; a value is still set by name)."""
from __future__ import annotations

from typing import Any

from cluster.templatetags.numbers import byte_rate

# What the number counts, shown beside its field.
UNITS = {
    "spu_down_alert_after_s": "seconds", "spu_down_heal_after_s": "seconds",
    "slow_spu_window_s": "seconds", "fix_after_s": "seconds",
    "leader_skew_percent": "%", "replica_skew_percent": "%",
    "slow_spu_shrinks": "LRS shrinks", "moves_per_hour": "moves an hour",
    "max_moves_per_spu": "moves at once per SPU", "max_moves": "moves at once in all",
    "throttle_bytes_per_s": "bytes/s",
}
HELP = {
    "spu_down_alert_after_s": "An SPU down this long raises an alert.",
    "spu_down_heal_after_s": "An SPU down this long has its replicas re-created elsewhere.",
    "leader_skew_percent": "Leaders on one SPU above the mean by more than this is skew.",
    "replica_skew_percent": "Replicas on one SPU above the mean by more than this is skew.",
    "slow_spu_shrinks": "This many LRS shrinks of one SPU within the window make it slow.",
    "slow_spu_window_s": "The window the shrinks of a slow SPU are counted in.",
    "slow_spu_move_leaders": "A slow SPU's preferred leaderships move to a replica in the LRS.",
    "fix_after_s": "How long a spread, balance or topology anomaly lasts before a plan fixes it.",
    "moves_per_hour": "Self-healing's moves in any hour, at most.",
    "throttle_bytes_per_s": "The copy rate of a self-healing plan, at most.",
}


def setting_rows(values: dict[str, Any], form: Any = None) -> list[dict[str, Any]]:
    """One row per setting: its value, unit, help, and (after a refused POST) the reason
    next to the field that was refused, with the value the operator typed."""
    refused = form.data.get("name") if form is not None and form.is_bound else None
    rows = []
    for name, value in sorted(values.items()):
        row = {"name": name, "value": value, "unit": UNITS.get(name, ""),
               "help": HELP.get(name, ""), "flag": isinstance(value, bool),
               "shown": byte_rate(value) if name == "throttle_bytes_per_s" else None,
               "error": None}
        if name.endswith("_enabled"):
            row["help"] = f"Detect and fix {name.removesuffix('_enabled').replace('_', ' ')}."
        if name == refused and form.errors:
            row["error"] = " ".join(e for errors in form.errors.values() for e in errors)
            row["typed"] = form.data.get("value", "")
        rows.append(row)
    return rows
