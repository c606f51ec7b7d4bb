"""With fewer racks than replicas, every partition spreads over every rack.

Issue 12: with RF 3 on 2 racks the planner ignored racks (91 of 300 random
plans left more partitions inside one rack than before). Now each rack holds
at most ceil(RF / racks) replicas of a partition and every rack holds one
(2 + 1 for RF 3 on 2 racks, as 000's rack-aware assignment does), and plans
still move no more than the exact optimum's lower bound where it is reached.
"""
from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from planner.core import Cluster, Options, Scenario, Spu, Topic, plan
from planner.core.metrics import rack_violations
from planner.core.spread import misplaced, spread_rule
from tests.unit.planner.core.test_exact_optimum import exact_moves

CASES = 300


def inside_one_rack(replica_map, rack_of) -> int:
    return sum(len({rack_of[s] for s in reps}) == 1 for reps in replica_map)


def random_plan(rng: random.Random):
    """RF 3 on 2 racks: random sizes, layouts, and a scale-out or removal."""
    count = rng.randint(4, 10)
    spus = tuple(Spu(i, f"r{i % 2}" if rng.random() < 0.8 else f"r{rng.randint(0, 1)}")
                 for i in range(count))
    if len({s.rack for s in spus}) < 2:
        spus = (*spus[:-1], Spu(count - 1, "r1" if spus[0].rack == "r0" else "r0"))
    topics = tuple(Topic(f"t{k}", tuple(tuple(rng.sample(range(count), 3))
                                        for _ in range(rng.randint(1, 12))))
                   for k in range(rng.randint(1, 3)))
    scenario = rng.choice([Scenario(), Scenario("add", add_spus=(Spu(count, "r0"),)),
                           Scenario("remove", remove_spus=(count - 1,))])
    if scenario.remove_spus and len({s.rack for s in spus[:-1]}) < 2:
        scenario = Scenario()
    return Cluster(spus, topics), scenario


def test_every_partition_spans_both_racks_in_300_random_rf3_plans_on_2_racks():
    rng = random.Random(12)
    worse = spread_broken = 0
    for _ in range(CASES):
        cluster, scenario = random_plan(rng)
        result = plan(cluster, scenario, Options())
        rack_of = {s.id: s.rack for s in (*cluster.spus, *scenario.add_spus)}
        for topic in cluster.topics:
            before = inside_one_rack(topic.replicas, rack_of)
            after = inside_one_rack(result.target[topic.name], rack_of)
            worse += after > before
            spread_broken += after > 0
            for reps in result.target[topic.name]:
                assert sorted(Counter(rack_of[s] for s in reps).values()) == [1, 2]
        assert result.metrics["rack_violations"] == 0
        assert result.metrics["replicas_moved"] >= result.metrics["lower_bound"]
    assert worse == 0 and spread_broken == 0


def test_scaling_out_a_spread_layout_moves_no_more_than_the_exact_optimum():
    """The exact optimum (networkx, ``test_exact_optimum``) of the same problem,
    rack caps included: the planner never needs more moves."""
    rng = random.Random(7)
    at_bound = 0
    for _ in range(100):
        count = rng.randint(4, 9)
        spus = tuple(Spu(i, f"r{i % 2}") for i in range(count))
        replicas = tuple((a, b, c) for a, b, c in
                         (tuple(rng.sample(range(count), 3)) for _ in range(40))
                         if len({a % 2, b % 2, c % 2}) == 2)
        cluster = Cluster(spus, (Topic("t", replicas),))
        scenario = Scenario("add", add_spus=(Spu(count, f"r{rng.randint(0, 1)}"),))
        result = plan(cluster, scenario, Options())
        _, exact = exact_moves(cluster, scenario, Options())
        assert result.metrics["replicas_moved"] <= exact
        assert result.metrics["rack_violations"] == 0
        at_bound += result.metrics["replicas_moved"] == result.metrics["lower_bound"] and \
            result.metrics["replica_spread"] <= 1
    # Known misses in this fixed sample: three plans one move above the bound
    # (still at the exact optimum). Two where a two-SPU rack must take exactly
    # one replica of every partition used to end one short; the thorough
    # chain search (``chains``) now places them.
    assert at_bound >= 97


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 6), st.integers(3, 5), st.randoms(use_true_random=False))
def test_replicas_spread_as_evenly_as_racks_allow(racks, rf, rng):
    count = max(rf + 1, racks * 2)
    spus = tuple(Spu(i, f"r{i % racks}") for i in range(count))
    topic = Topic("t", tuple(tuple(rng.sample(range(count), rf)) for _ in range(10)))
    result = plan(Cluster(spus, (topic,)), Scenario(), Options())
    rack_of = {s.id: s.rack for s in spus}
    rule = spread_rule(rf, Counter(rack_of.values()).values())
    assert rule.cap == -(-rf // racks)  # every rack has at least that many SPUs here
    for reps in result.target["t"]:
        keys = [rack_of[s] for s in reps]
        assert not misplaced(keys, rf, rule)
        assert max(Counter(keys).values()) <= rule.cap
        assert len(set(keys)) == min(rf, racks)
    assert rack_violations(result.target, rack_of) == 0


def test_rf3_on_2_racks_is_two_plus_one_as_in_000():
    spus = tuple(Spu(i, "a" if i < 3 else "b") for i in range(6))
    topic = Topic("t", ((0, 1, 2), (3, 4, 5), (0, 1, 3), (2, 4, 5)))
    result = plan(Cluster(spus, (topic,)), Scenario(), Options())
    assert result.before["rack_violations"] == 2
    assert result.metrics["rack_violations"] == 0
    assert [sorted(Counter("a" if s < 3 else "b" for s in reps).values())
            for reps in result.target["t"]] == [[1, 2]] * 4
    assert result.metrics["replicas_moved"] == result.metrics["lower_bound"] == 2
