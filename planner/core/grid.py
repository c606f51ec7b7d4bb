"""One row of a scenario grid: the same for the in-process and the Spark engine."""
from __future__ import annotations

from typing import Any

from planner.core.metrics import LAYOUT_KEYS, MOVEMENT_KEYS
from planner.core.model import Cluster, Options, PlanError, Scenario
from planner.core.planner import plan

COLUMNS = ("scenario", *MOVEMENT_KEYS, *LAYOUT_KEYS, "error")


def scenario_row(cluster: Cluster, scenario: Scenario, options: Options) -> dict[str, Any]:
    """One table row: the scenario's name, its plan's metrics, or its error."""
    try:
        metrics = plan(cluster, scenario, options).metrics
    except PlanError as error:
        return {"scenario": scenario.name, **dict.fromkeys(COLUMNS[1:-1]), "error": str(error)}
    return {"scenario": scenario.name, **{k: metrics[k] for k in COLUMNS[1:-1]}, "error": None}
