from __future__ import annotations

from collections import Counter

from planner.core import Cluster, Options, Scenario, Spu, Topic, plan


def counts(replica_map) -> Counter:
    return Counter(s for reps in replica_map for s in reps)


def test_seven_six_zero_zero_becomes_four_three_three_three_with_six_moves():
    replicas = tuple((0,) for _ in range(7)) + tuple((1,) for _ in range(6))
    cluster = Cluster(tuple(Spu(i) for i in range(4)), (Topic("t", replicas),))
    result = plan(cluster)
    assert sorted(counts(result.target["t"]).values(), reverse=True) == [4, 3, 3, 3]
    assert counts(result.target["t"])[0] == 4  # the fuller SPU keeps the extra one
    assert result.metrics["replicas_moved"] == 6
    assert result.metrics["lower_bound"] == 6


def test_an_already_balanced_cluster_needs_no_move():
    spus = tuple(Spu(i, f"r{i % 3}") for i in range(6))
    topic = Topic("t", tuple((p % 6, (p + 1) % 6, (p + 2) % 6) for p in range(12)))
    result = plan(Cluster(spus, (topic,)), options=Options(optimise_order=False))
    assert result.metrics["replicas_moved"] == 0
    assert result.moves == ()


def test_removing_an_spu_moves_exactly_its_replicas():
    spus = tuple(Spu(i, f"r{i % 3}") for i in range(6))
    topic = Topic("t", tuple((p % 6, (p + 1) % 6, (p + 2) % 6) for p in range(12)))
    result = plan(Cluster(spus, (topic,)), Scenario("drop 4", remove_spus=(4,)))
    on_four = sum(4 in reps for reps in topic.replicas)
    assert result.metrics["replicas_moved"] == on_four == result.metrics["lower_bound"]
    assert all(4 not in reps for reps in result.target["t"])
    assert all(set(m.removed) == {4} for m in result.moves if m.added)


def test_adding_an_spu_moves_only_what_it_must_receive():
    spus = tuple(Spu(i) for i in range(4))
    topic = Topic("t", tuple((p % 4, (p + 1) % 4) for p in range(10)))
    result = plan(Cluster(spus, (topic,)), Scenario("add", add_spus=(Spu(4),)))
    assert counts(result.target["t"])[4] == 4
    assert result.metrics["replicas_moved"] == 4


def test_the_same_input_gives_the_same_plan():
    spus = tuple(Spu(i, f"r{i % 2}") for i in range(5))
    topic = Topic("t", tuple(((p * 3) % 5, (p * 3 + 1) % 5) for p in range(9)))
    cluster = Cluster(spus, (topic,))
    scenario = Scenario("add", add_spus=(Spu(5, "r1"),))
    assert plan(cluster, scenario) == plan(cluster, scenario)


def test_a_higher_replication_factor_adds_one_copy_per_partition():
    spus = tuple(Spu(i) for i in range(4))
    topic = Topic("t", tuple((p % 4,) for p in range(8)))
    result = plan(Cluster(spus, (topic,)), Scenario("rf", replication=(("t", 2),)))
    assert result.metrics["replicas_moved"] == 8
    assert all(len(set(reps)) == 2 for reps in result.target["t"])
    assert set(counts(result.target["t"]).values()) == {4}


def test_a_lower_replication_factor_copies_nothing():
    spus = tuple(Spu(i) for i in range(4))
    topic = Topic("t", tuple((p % 4, (p + 1) % 4, (p + 2) % 4) for p in range(8)))
    result = plan(Cluster(spus, (topic,)), Scenario("rf", replication=(("t", 1),)))
    assert result.metrics["replicas_moved"] == 0
    assert set(counts(result.target["t"]).values()) == {2}


def test_quotas_rounded_topic_by_topic_no_longer_leave_an_spu_empty():
    """9 replicas on 8 SPUs: every SPU ends at 1 or 2, with the 4 forced moves."""
    cluster = Cluster(tuple(Spu(i) for i in range(8)),
                      (Topic("t0", ((0,), (4,))), Topic("t1", ((0,), (0,), (0,), (4,))),
                       Topic("t2", ((0, 1, 2),))))
    result = plan(cluster, Scenario(),
                  Options(anti_affinity=True, balance_leaders=False, optimise_order=False))
    held = counts([reps for m in result.target.values() for reps in m])
    assert sorted(held[s] for s in range(8)) == [1] * 7 + [2]
    assert result.metrics["replica_spread"] == 1
    assert result.metrics["replicas_moved"] == result.metrics["lower_bound"] == 4
