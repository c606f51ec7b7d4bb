from __future__ import annotations

import pytest

from planner.core import Cluster, Options, Scenario, Spu, Topic, plan, standard_grid
from planner.spark import evaluate_grid, grid_dataframe, plan_distributed
from planner.spark.grid import scenario_row

pytestmark = pytest.mark.spark


def small_cluster() -> Cluster:
    spus = tuple(Spu(i, f"rack-{i % 3}") for i in range(9))
    topics = tuple(Topic(f"t{k}", tuple(((p + k) % 9, (p + k + 1) % 9, (p + k + 5) % 9)
                                        for p in range(12))) for k in range(4))
    return Cluster(spus, topics)


def test_the_grid_equals_in_process_evaluation_of_each_scenario(spark):
    cluster = small_cluster()
    scenarios = [*standard_grid(cluster, up_to=2), Scenario("unknown SPU", remove_spus=(99,))]
    rows = evaluate_grid(spark, cluster, scenarios)
    assert [r["scenario"] for r in rows] == [s.name for s in scenarios]
    assert rows == [scenario_row(cluster, s, Options()) for s in scenarios]
    assert rows[-1]["error"] and rows[-1]["replicas_moved"] is None


def test_grid_rows_become_a_scenario_by_metrics_table(spark):
    cluster = small_cluster()
    rows = evaluate_grid(spark, cluster, standard_grid(cluster, up_to=1))
    frame = grid_dataframe(spark, rows)
    assert frame.count() == len(rows)
    assert {"scenario", "replicas_moved", "lower_bound", "failover_concentration"} <= set(frame.columns)


def test_the_distributed_plan_equals_the_in_process_plan(spark):
    cluster = small_cluster()
    scenario = Scenario("add two", add_spus=(Spu(9, "rack-0"), Spu(10, "rack-1")))
    assert plan_distributed(spark, cluster, scenario) == plan(cluster, scenario)


def test_the_distributed_plan_equals_in_process_without_racks_and_with_rf_change(spark):
    cluster = small_cluster()
    options = Options(anti_affinity=False, optimise_order=False)
    scenario = Scenario("rf", remove_spus=(4,), replication=(("t1", 2),))
    assert plan_distributed(spark, cluster, scenario, options) == plan(cluster, scenario, options)
