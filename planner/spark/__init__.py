"""PySpark jobs of the planner: scenario grids and distributed large plans."""
from __future__ import annotations

from planner.spark.distributed import plan_distributed, spark_mapper
from planner.spark.grid import evaluate_grid, grid_dataframe, scenario_row
from planner.spark.session import spark_session
from planner.spark.streamed import (StreamedPlan, generated_topics, plan_streamed,
                                    topics_from_cluster)

__all__ = ["evaluate_grid", "grid_dataframe", "plan_distributed", "scenario_row",
           "spark_mapper", "spark_session", "StreamedPlan", "generated_topics", "plan_streamed",
           "topics_from_cluster"]
