"""One row of a scenario grid: the same for the in-process and the Spark engine."""
from __future__ import annotations

from typing import Any

from planner.core.bytes_balance import ByteOptions, plan_bytes
from planner.core.metrics import LAYOUT_KEYS, MOVEMENT_KEYS
from planner.core.model import Cluster, Options, PlanError, Scenario
from planner.core.planner import plan

COLUMNS = ("scenario", *MOVEMENT_KEYS, *LAYOUT_KEYS, "error")
# A byte plan's row adds how far the fullest SPU ends above its ideal disk load, and the band.
BYTE_COLUMNS = ("disk_spread", "band_bytes")


def scenario_row(cluster: Cluster, scenario: Scenario, options: Options,
                 by_bytes: ByteOptions | None = None) -> dict[str, Any]:
    """One table row: the scenario's name, its plan's metrics, or its error; a plan by
    bytes (``planner/core/bytes_balance.py``) where ``by_bytes`` is given."""
    keys = (*COLUMNS[1:-1], *(BYTE_COLUMNS if by_bytes is not None else ()))
    try:
        if by_bytes is None:
            metrics = plan(cluster, scenario, options).metrics
        else:
            metrics = plan_bytes(cluster, scenario, options, by_bytes).metrics
    except PlanError as error:
        return {"scenario": scenario.name, **dict.fromkeys(keys), "error": str(error)}
    return {"scenario": scenario.name, **{k: metrics[k] for k in keys}, "error": None}
