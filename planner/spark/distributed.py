"""Plan one very large cluster with the per-topic work spread over Spark.

The pipeline is ``planner.core.planner.plan``; only its ``mapper`` changes.
Cluster-wide balance survives the split because the driver first fixes every
(topic, SPU) quota from replica counts (balanced per topic and per SPU at
once), executors then place each topic against its quotas independently,
and the driver finishes with the cluster-wide leader matching and follower
order, which need only SPU ids. Same input, same plan as in-process.
"""
from __future__ import annotations

from typing import Callable, Sequence, TypeVar

from pyspark.sql import SparkSession

from planner.core.model import Cluster, Options, Plan, Scenario
from planner.core.planner import Mapper, plan

T = TypeVar("T")
U = TypeVar("U")


def spark_mapper(spark: SparkSession, slices: int | None = None) -> Mapper:
    context = spark.sparkContext

    def mapper(fn: Callable[[T], U], items: Sequence[T]) -> list[U]:
        items = list(items)
        count = slices or min(len(items), 4 * context.defaultParallelism) or 1
        return context.parallelize(items, count).map(fn).collect()

    return mapper


def plan_distributed(spark: SparkSession, cluster: Cluster, scenario: Scenario | None = None,
                     options: Options | None = None, slices: int | None = None) -> Plan:
    return plan(cluster, scenario, options, mapper=spark_mapper(spark, slices))
