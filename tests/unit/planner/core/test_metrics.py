from __future__ import annotations

from planner.core import Cluster, Options, Scenario, Spu, Topic, plan
from planner.core.metrics import failover_concentration, layout_metrics, rack_violations


def test_failover_concentration_is_the_largest_share_one_spu_would_take_over():
    layout = {"t": ((0, 1, 2), (0, 1, 3), (0, 2, 1), (1, 0, 2))}
    # SPU 0 leads 3 partitions, SPU 1 is next in line for 2 of them.
    assert failover_concentration(layout) == 1.0  # SPU 1 leads one, SPU 0 follows it
    assert failover_concentration({"t": ((0, 1), (0, 2), (0, 1), (0, 2))}) == 0.5


def test_rack_violations_count_partitions_and_ignore_spus_without_rack():
    rack_of = {0: "a", 1: "a", 2: None, 3: None, 4: "b"}
    assert rack_violations({"t": ((0, 1, 4), (2, 3, 4), (0, 2, 4))}, rack_of) == 1


def test_spreads_are_cluster_wide_and_worst_topic():
    spus = [Spu(i) for i in range(3)]
    metrics = layout_metrics({"x": ((0,), (0,)), "y": ((1,), (2,))}, spus)
    assert metrics["replica_spread"] == 1 and metrics["topic_replica_spread"] == 2
    assert metrics["leader_spread"] == 1 and metrics["topic_leader_spread"] == 2


def test_the_lower_bound_counts_replicas_that_must_leave_a_crowded_rack():
    spus = tuple(Spu(i, "abc"[i % 3]) for i in range(6))
    crowded = Topic("t", ((0, 3, 1), (1, 4, 2), (2, 5, 0)))  # each partition twice in a rack
    result = plan(Cluster(spus, (crowded,)))
    assert result.before["rack_violations"] == 3
    assert result.metrics["rack_violations"] == 0
    assert result.metrics["lower_bound"] == 3 == result.metrics["replicas_moved"]


def test_ratio_and_bytes_are_reported():
    spus = tuple(Spu(i) for i in range(3))
    topic = Topic("t", ((0,), (0,), (0,)), sizes=(100, 200, 300))
    result = plan(Cluster(spus, (topic,)), options=Options())
    assert result.metrics["moved_to_lower_bound"] == 1.0
    assert result.metrics["bytes_moved"] in (300, 400, 500)
    assert plan(Cluster(spus, (Topic("u", ((0,), (1,), (2,))),))).metrics["bytes_moved"] is None


def test_before_metrics_describe_the_current_layout():
    spus = tuple(Spu(i) for i in range(2))
    result = plan(Cluster(spus, (Topic("t", ((0,), (0,))),)), Scenario("add", add_spus=(Spu(2),)))
    assert result.before["replica_spread"] == 2
