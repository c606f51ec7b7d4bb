"""Per-SPU and per-topic counts behind the plan page's before/after heatmaps."""
from __future__ import annotations

from planner.core.loads import SpuLoad, spu_loads, topic_spu_replicas

LAYOUT = {"orders": ((0, 1, 2), (1, 2, 0), (2, 0, 1)), "events": ((0, 3), (3, 0))}


def test_each_spu_counts_its_replicas_and_the_partitions_it_leads():
    assert spu_loads(LAYOUT) == {0: SpuLoad(5, 2), 1: SpuLoad(3, 1), 2: SpuLoad(3, 1),
                                 3: SpuLoad(2, 1)}


def test_an_spu_holding_nothing_is_absent():
    assert 7 not in spu_loads(LAYOUT)


def test_topic_by_spu_counts_replicas_per_topic():
    assert topic_spu_replicas(LAYOUT) == {"orders": {0: 3, 1: 3, 2: 3}, "events": {0: 2, 3: 2}}
