"""Byte plans on Spark (issue 34): a grid of what-ifs planned by bytes, one scenario per
Spark task, equals the same grid in-process, on a random cluster with heavy-tailed sizes,
unequal racks and capacities."""
from __future__ import annotations

import random

import pytest

from planner.core import Cluster, Options, Scenario, Spu, Topic, standard_grid
from planner.core.bytes_balance import ByteOptions, plan_bytes
from planner.core.grid import scenario_row
from planner.spark import evaluate_grid

pytestmark = pytest.mark.spark


def sized_cluster(seed: int = 34) -> Cluster:
    rng = random.Random(seed)
    spus = tuple(Spu(i, f"rack-{i % 3 if i < 8 else 0}") for i in range(10))
    topics = []
    for k in range(5):
        count = rng.randint(6, 20)
        replicas = tuple(tuple(rng.sample(range(10), 3)) for _ in range(count))
        sizes = tuple(int(rng.paretovariate(1.2) * 10 ** 6) for _ in range(count))
        topics.append(Topic(f"t{k}", replicas, sizes))
    return Cluster(spus, tuple(topics))


def test_a_byte_grid_on_spark_equals_the_byte_grid_in_process(spark):
    cluster = sized_cluster()
    opts = ByteOptions(max_disk_percent=90.0,
                       capacities={s.id: (4 if s.id % 2 else 6) * 10 ** 8 for s in cluster.spus})
    scenarios = [*standard_grid(cluster, up_to=1), Scenario("unknown", remove_spus=(99,))]
    rows = evaluate_grid(spark, cluster, scenarios, Options(), by_bytes=opts)
    assert rows == [scenario_row(cluster, s, Options(), opts) for s in scenarios]
    good = [r for r in rows if r["error"] is None]
    assert good and all(r["disk_spread"] is not None and r["bytes_moved"] is not None
                        for r in good)
    assert rows[-1]["error"]
    # A row is the metrics of the in-process byte plan of its scenario.
    first = plan_bytes(cluster, scenarios[0], Options(), opts).metrics
    assert rows[0]["bytes_moved"] == first["bytes_moved"]
    assert rows[0]["disk_spread"] == first["disk_spread"]
