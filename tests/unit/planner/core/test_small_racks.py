"""Racks too small for their even share, and SPUs of one rack kept level (issue 19).

A rack holds at most one replica of a partition per SPU. With fewer racks
than replicas, a rack smaller than ``ceil(RF / racks)`` holds what it can and
the other racks take the rest as evenly as they can; the quota rounding used
to be handed shares that a small rack could not hold and raised
``RuntimeError: quota flow found no rounding``.
"""
from __future__ import annotations

from collections import Counter

import pytest

from planner.core import Cluster, Options, Scenario, Spu, Topic, plan
from planner.core.spread import spread_rule
from planner.core.targets import topic_shares, waterfill


def per_spu(result, topic: str) -> Counter:
    return Counter(s for reps in result.target[topic] for s in reps)


def test_rf4_over_a_three_spu_rack_and_a_one_spu_rack_keeps_its_only_layout():
    # The example: there is one way to place RF 4 on four SPUs.
    spus = (Spu(0, "a"), Spu(1, "a"), Spu(2, "a"), Spu(3, "b"))
    cluster = Cluster(spus, (Topic("t", ((0, 1, 2, 3),)),))
    result = plan(cluster, Scenario(), Options())
    assert result.target["t"] == ((0, 1, 2, 3),)
    assert result.moves == ()
    assert result.before["rack_violations"] == result.metrics["rack_violations"] == 0


def test_a_one_spu_rack_holds_one_replica_of_each_partition_and_the_big_rack_the_rest():
    spus = (Spu(0, "a"), Spu(1, "a"), Spu(2, "a"), Spu(3, "a"), Spu(4, "b"))
    crowded = Topic("t", tuple((0, 1, 2, 3) for _ in range(4)))  # all in rack a
    result = plan(Cluster(spus, (crowded,)), Scenario(), Options())
    for reps in result.target["t"]:
        assert sorted(Counter("b" if s == 4 else "a" for s in reps).values()) == [1, 3]
    assert sorted(per_spu(result, "t").values()) == [3, 3, 3, 3, 4]
    assert result.metrics["rack_violations"] == 0


def test_losing_a_rack_leaves_a_small_rack_that_holds_what_it_can():
    spus = (*(Spu(i, "a") for i in range(4)), Spu(4, "b"), Spu(5, "c"), Spu(6, "c"))
    topic = Topic("t", tuple((i % 4, 4, 5 + i % 2) for i in range(6)))
    scenario = Scenario("lose c, RF 4", lose_racks=("c",), replication=(("t", 4),))
    result = plan(Cluster(spus, (topic,)), scenario, Options())
    for reps in result.target["t"]:
        assert 4 in reps and len(set(reps)) == 4 and set(reps) <= set(range(5))
    assert sorted(per_spu(result, "t")[s] for s in range(4)) == [4, 4, 5, 5]


@pytest.mark.parametrize("sizes, rf, cap", [
    ((4, 4, 4), 4, 2), ((2, 2), 3, 2), ((3, 1), 4, 3), ((6, 3, 1), 4, 2),
    ((1, 1, 5), 5, 3), ((1, 1, 1), 2, 1), ((2, 1), 3, 2),
])
def test_the_rack_cap_is_the_least_level_the_racks_can_reach(sizes, rf, cap):
    assert spread_rule(rf, sizes) == (cap, min(rf, len(sizes)))


def test_a_small_rack_share_stops_at_what_its_spus_hold():
    spus = [Spu(0, "a"), Spu(1, "a"), Spu(2, "a"), Spu(3, "b")]
    shares = topic_shares("t", 5, 4, spus, anti_affinity=True)
    assert shares.shares[3] == 5
    assert sum(shares.shares.values()) == pytest.approx(20)
    assert shares.rule == (3, 2)


def test_waterfill_lets_the_larger_imbalance_decide_when_caps_and_floors_both_bind():
    # Fixing the capped part first would give a 5 and b 5: one more than the total.
    parts = waterfill(9, {"a": 10, "b": 1}, {"a": 5, "b": 9}, {"a": 0, "b": 5})
    assert parts == pytest.approx({"a": 4, "b": 5})


# 23 partitions on 3 racks x 4 SPUs (rack = id mod 3), a random layout that
# moving from RF 3 to RF 4 once left at 6 to 9 replicas per SPU.
RF3_LAYOUT = ((2, 11, 10), (3, 5, 1), (0, 1, 2), (4, 3, 6), (11, 0, 6), (11, 9, 5), (7, 4, 3),
              (0, 11, 2), (6, 11, 2), (10, 4, 2), (7, 4, 2), (4, 10, 1), (2, 3, 0),
              (10, 11, 7), (4, 7, 6), (1, 7, 11), (6, 11, 9), (7, 0, 2), (2, 9, 6),
              (7, 11, 5), (7, 2, 1), (5, 4, 2), (5, 4, 10))


def test_rf3_to_4_on_three_racks_of_four_gives_7_or_8_replicas_per_spu():
    spus = tuple(Spu(i, f"r{i % 3}") for i in range(12))
    cluster = Cluster(spus, (Topic("t", RF3_LAYOUT),))
    result = plan(cluster, Scenario("RF 4", replication=(("t", 4),)), Options())
    assert sorted(set(per_spu(result, "t").values())) == [7, 8]
    for reps in result.target["t"]:
        assert sorted(Counter(s % 3 for s in reps).values()) == [1, 1, 2]
    assert result.metrics["rack_violations"] == 0
