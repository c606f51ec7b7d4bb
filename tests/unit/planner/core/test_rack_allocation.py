"""The rack-level and node-level allocation rules of the rebalancing proposal."""
from __future__ import annotations

from collections import Counter

from planner.core import Cluster, Scenario, Spu, Topic, plan
from planner.core.targets import topic_shares, waterfill


def rack_counts(replica_map, rack_of) -> Counter:
    return Counter(rack_of[s] for reps in replica_map for s in reps)


def test_with_as_many_racks_as_replicas_each_rack_gets_partition_count_replicas():
    spus = [Spu(0, "a"), Spu(1, "a"), Spu(2, "b"), Spu(3, "b"), Spu(4, "b"), Spu(5, "c")]
    shares = topic_shares("t", 10, 3, spus, anti_affinity=True)
    per_rack = Counter()
    for spu in spus:
        per_rack[spu.rack] += shares.shares[spu.id]
    assert {r: round(v, 9) for r, v in per_rack.items()} == {"a": 10, "b": 10, "c": 10}


def test_with_as_many_racks_as_replicas_a_plan_puts_one_replica_per_rack():
    spus = tuple([Spu(0, "a"), Spu(1, "a"), Spu(2, "b"), Spu(3, "b"), Spu(4, "b"), Spu(5, "c")])
    topic = Topic("t", tuple((0, 1, 2) for _ in range(6)))  # everything crowded in rack a
    result = plan(Cluster(spus, (topic,)))
    rack_of = {s.id: s.rack for s in spus}
    assert rack_counts(result.target["t"], rack_of) == {"a": 6, "b": 6, "c": 6}
    assert result.metrics["rack_violations"] == 0


def test_nodes_in_larger_racks_host_fewer_replicas_when_racks_equal_replication():
    spus = tuple([Spu(0, "a"), Spu(1, "b"), Spu(2, "b"), Spu(3, "b")])
    topic = Topic("t", tuple((0, 1) for _ in range(6)))
    result = plan(Cluster(spus, (topic,)))
    per_spu = Counter(s for reps in result.target["t"] for s in reps)
    assert per_spu[0] == 6 and sorted(per_spu[s] for s in (1, 2, 3)) == [2, 2, 2]


def test_more_racks_than_replicas_split_by_weight_when_under_partition_count():
    # 4 racks of 2 SPUs, RF 2, 8 partitions: 16 replicas, weighted 4 per rack (< 8).
    spus = [Spu(i, "abcd"[i % 4]) for i in range(8)]
    shares = topic_shares("t", 8, 2, spus, anti_affinity=True)
    assert all(abs(q - 2.0) < 1e-9 for q in shares.shares.values())


def test_a_rack_whose_weighted_share_reaches_partition_count_gets_exactly_that():
    # Rack a has 6 of 9 SPUs: weighted 18 * 6/9 = 12 >= 6 partitions, so it gets 6.
    spus = [Spu(i, "a") for i in range(6)] + [Spu(6, "b"), Spu(7, "c"), Spu(8, "d")]
    shares = topic_shares("t", 6, 3, spus, anti_affinity=True)
    rack_a = sum(shares.shares[i] for i in range(6))
    assert abs(rack_a - 6) < 1e-9
    assert all(abs(shares.shares[i] - 4.0) < 1e-9 for i in (6, 7, 8))


def test_weighted_remainders_go_to_racks_by_weight_and_are_integers_in_a_plan():
    # 3 racks sized 3, 2, 1 and RF 2 with 5 partitions: shares 5, 3.33, 1.67.
    spus = tuple(Spu(i, r) for i, r in enumerate("aaabbc"))
    topic = Topic("t", tuple((0, 3) for _ in range(5)))
    result = plan(Cluster(spus, (topic,)))
    per_rack = rack_counts(result.target["t"], {s.id: s.rack for s in spus})
    assert per_rack["a"] == 5
    assert per_rack["b"] in (3, 4) and per_rack["c"] in (1, 2)
    assert per_rack["b"] + per_rack["c"] == 5


def test_spu_weights_split_a_rack_share():
    assert waterfill(9, {"x": 2.0, "y": 1.0}, cap=100) == {"x": 6.0, "y": 3.0}
    assert waterfill(9, {"x": 2.0, "y": 1.0}, cap=5) == {"x": 5, "y": 4.0}


def test_nodes_within_a_rack_differ_by_at_most_one():
    spus = tuple(Spu(i, "ab"[i % 2]) for i in range(6))
    topic = Topic("t", tuple((0, 1) for _ in range(7)))
    result = plan(Cluster(spus, (topic,)), Scenario("grow", add_spus=(Spu(6, "a"),)))
    per_spu = Counter(s for reps in result.target["t"] for s in reps)
    for rack in "ab":
        members = [per_spu[s.id] for s in (*spus, Spu(6, "a")) if s.rack == rack]
        assert max(members) - min(members) <= 1


def test_spus_without_a_rack_are_left_out_of_anti_affinity():
    spus = tuple([Spu(0, "a"), Spu(1, "a"), Spu(2), Spu(3)])
    topic = Topic("t", tuple((0, 1) for _ in range(4)))
    result = plan(Cluster(spus, (topic,)))
    assert result.metrics["rack_violations"] == 0
    assert all(not {0, 1} <= set(reps) for reps in result.target["t"])
