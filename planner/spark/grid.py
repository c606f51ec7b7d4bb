"""Evaluate a grid of what-if scenarios in parallel: one Spark task per
scenario, each running the in-process planner on the broadcast cluster, so a
row equals ``plan(cluster, scenario, options).metrics`` exactly (or, by bytes,
``plan_bytes(cluster, scenario, options, by_bytes).metrics``)."""
from __future__ import annotations

from typing import Any, Sequence

from pyspark.sql import DataFrame, SparkSession

from planner.core.grid import COLUMNS, scenario_row
from planner.core.bytes_balance import ByteOptions
from planner.core.model import Cluster, Options, Scenario

SLICES_PER_CORE = 32


def evaluate_grid(spark: SparkSession, cluster: Cluster, scenarios: Sequence[Scenario],
                  options: Options | None = None, slices: int | None = None,
                  by_bytes: ByteOptions | None = None) -> list[dict[str, Any]]:
    """Rows in the order of ``scenarios``; plans by bytes where ``by_bytes`` is given."""
    options = options or Options()
    context = spark.sparkContext
    shared = context.broadcast(cluster)
    # Many short slices: a core that finishes early takes the next one, so a slow
    # scenario (or a busy core) delays the grid by a slice of a few scenarios, not
    # by a quarter of the grid. Workers are reused, and each keeps the broadcast
    # cluster and its current facts (planner.current_facts) for every later slice.
    count = slices or min(len(scenarios), SLICES_PER_CORE * context.defaultParallelism) or 1
    # Slices are contiguous runs and a grid lists scenarios by kind, whose
    # costs differ: dealing them out in turn keeps the slices even.
    indexed = sorted(enumerate(scenarios), key=lambda item: (item[0] % count, item[0]))
    rows = (context.parallelize(indexed, count)
            .map(lambda item: (item[0], scenario_row(shared.value, item[1], options, by_bytes)))
            .collect())
    shared.unpersist()
    return [row for _, row in sorted(rows, key=lambda pair: pair[0])]


def grid_dataframe(spark: SparkSession, rows: Sequence[dict[str, Any]]) -> DataFrame:
    """The scenario x metrics table as a DataFrame (all numbers as doubles)."""
    schema = ", ".join(f"{c} string" if c in ("scenario", "error") else f"{c} double"
                       for c in COLUMNS)
    data = [tuple(_cell(row[c], c) for c in COLUMNS) for row in rows]
    return spark.createDataFrame(data, schema)


def _cell(value: Any, column: str) -> Any:
    if column in ("scenario", "error") or value is None:
        return value
    return float(value)
