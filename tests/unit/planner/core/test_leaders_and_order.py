from __future__ import annotations

from collections import Counter

from planner.core import Cluster, Options, Spu, Topic, plan


def three_way() -> Cluster:
    # Every partition on SPUs 0, 1, 2, all led by 0.
    return Cluster(tuple(Spu(i) for i in range(3)), (Topic("t", tuple((0, 1, 2) for _ in range(6))),))


def test_leaders_are_balanced_by_reordering_without_moving_data():
    result = plan(three_way())
    assert Counter(reps[0] for reps in result.target["t"]) == {0: 2, 1: 2, 2: 2}
    assert result.metrics["replicas_moved"] == 0
    assert result.metrics["leader_changes"] == 4


def test_with_leader_balancing_off_existing_leaders_stay():
    result = plan(three_way(), options=Options(balance_leaders=False, optimise_order=False))
    assert result.moves == ()


def test_existing_leaders_stay_where_balance_allows():
    topic = Topic("t", ((0, 1), (1, 0), (0, 1), (1, 0)))
    result = plan(Cluster((Spu(0), Spu(1)), (topic,)))
    assert result.moves == ()


def test_order_optimisation_spreads_who_takes_over_from_each_leader():
    spus = tuple(Spu(i) for i in range(4))
    topic = Topic("t", tuple((0, 1, 2, 3) for _ in range(12)))
    plain = plan(Cluster(spus, (topic,)), options=Options(optimise_order=False))
    spread = plan(Cluster(spus, (topic,)))
    assert spread.metrics["failover_concentration"] < plain.metrics["failover_concentration"]
    assert spread.metrics["failover_concentration"] <= 0.34  # each leads 3, one per follower
    assert spread.metrics["replicas_moved"] == 0
