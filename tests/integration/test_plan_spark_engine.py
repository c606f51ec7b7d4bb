"""The workbench's Spark engine gives the plan and grid rows of the in-process engine."""
from __future__ import annotations

import pytest

from planner import core
from planner.services import grid_compute, grid_request, plan_compute, plan_request

pytestmark = [pytest.mark.spark, pytest.mark.django_db]
SCENARIO = core.Scenario(add_spus=(core.Spu(12, "rack-a"), core.Spu(13, "rack-b")))


def test_a_plan_and_a_grid_on_spark_equal_the_in_process_ones(planned_cluster, queued,
                                                              settings):
    settings.SPARK_MASTER = "local[2]"
    plans = {}
    for engine in ("local", "spark"):
        record = plan_request(scenario=SCENARIO, options=core.Options(), engine=engine)
        plans[engine] = plan_compute(plan_id=record.pk)
    assert plans["spark"].engine == "spark" and plans["spark"].state == "pending"
    assert plans["spark"].moves == plans["local"].moves
    assert plans["spark"].target == plans["local"].target
    grids = {}
    for engine in ("local", "spark"):
        grids[engine] = grid_compute(grid_id=grid_request(up_to=1, options=core.Options(),
                                                          engine=engine).pk)
    assert grids["spark"].rows == grids["local"].rows and len(grids["spark"].rows) == 20
