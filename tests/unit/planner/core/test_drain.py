"""Draining an SPU moves only its replicas, and leadership only where it led."""
from __future__ import annotations

import random

import pytest

from planner.core import Cluster, Options, PlanError, Spu, Topic
from planner.core.drain import drain_plan, replicas_on


def racks(*layout: tuple[int, str]) -> tuple[Spu, ...]:
    return tuple(Spu(i, r) for i, r in layout)


SPUS = racks((0, "a"), (1, "a"), (2, "b"), (3, "b"), (4, "c"), (5, "c"))


def test_only_the_drained_spus_replicas_move():
    topic = Topic("t", ((0, 2, 4), (2, 4, 1), (3, 5, 0), (1, 3, 5), (4, 0, 3)))
    plan = drain_plan(Cluster(SPUS, (topic,)), 0)
    assert len(plan.moves) == replicas_on({"t": topic.replicas}, 0) == 3
    for move in plan.moves:
        assert move.removed == (0,) and len(move.added) == 1
        assert set(move.before) - {0} <= set(move.after)
    untouched = [p for p, reps in enumerate(topic.replicas) if 0 not in reps]
    assert all(plan.target["t"][p] == topic.replicas[p] for p in untouched)
    assert plan.metrics["replicas_moved"] == plan.metrics["lower_bound"] == 3


def test_the_new_replica_keeps_racks_apart():
    topic = Topic("t", ((0, 2, 4),))
    (move,) = drain_plan(Cluster(SPUS, (topic,)), 0).moves
    assert move.added == (1,), "rack a lost SPU 0: only SPU 1 keeps one replica per rack"


def test_a_drained_leader_hands_over_to_a_kept_replica_never_the_new_one():
    topic = Topic("t", ((0, 2, 4),))
    (move,) = drain_plan(Cluster(SPUS, (topic,)), 0).moves
    assert move.after[0] in (2, 4) and move.after[-1] == move.added[0]
    assert move.leader_change


def test_a_follower_drain_changes_no_leader():
    topic = Topic("t", ((2, 0, 4),))
    (move,) = drain_plan(Cluster(SPUS, (topic,)), 0).moves
    assert move.after == (2, 1, 4) and not move.leader_change


def test_the_actual_leader_keeps_leading_when_the_preferred_one_is_drained():
    topic = Topic("t", ((0, 2, 4),), leaders=(4,))
    (move,) = drain_plan(Cluster(SPUS, (topic,)), 0).moves
    assert move.after[0] == 4 and not move.leader_change


def test_offline_spus_take_nothing_and_a_partition_with_nowhere_to_go_is_refused():
    topic = Topic("t", ((0, 2, 4),))
    (move,) = drain_plan(Cluster(SPUS, (topic,)), 0, unavailable={1}).moves
    assert 1 not in move.after
    small = Cluster(racks((0, None), (1, None)), (Topic("t", ((0, 1),)),))
    with pytest.raises(PlanError, match="t/0"):
        drain_plan(small, 0)
    with pytest.raises(PlanError, match="SPU 9"):
        drain_plan(small, 9)


def test_replicas_spread_evenly_over_the_takers():
    spus = tuple(Spu(i) for i in range(5))
    topic = Topic("t", tuple((0, 1 + p % 4) for p in range(8)))
    plan = drain_plan(Cluster(spus, (topic,)), 0)
    counts = [sum(reps.count(s) for reps in plan.target["t"]) for s in range(1, 5)]
    assert max(counts) - min(counts) <= 1 and sum(counts) == 16


@pytest.mark.parametrize("seed", range(40))
def test_random_clusters_drain_exactly_the_spus_replicas(seed):
    rng = random.Random(seed)
    spus = tuple(Spu(i, rng.choice("abc")) for i in range(rng.randint(4, 9)))
    ids = [s.id for s in spus]
    topics = tuple(Topic(f"t{n}", tuple(tuple(rng.sample(ids, rf)) for _ in range(rng.randint(1, 9))))
                   for n, rf in enumerate(rng.choices([1, 2, 3], k=3)))
    victim = rng.choice(ids)
    plan = drain_plan(Cluster(spus, topics), victim, Options(anti_affinity=False))
    layout = {t.name: t.replicas for t in topics}
    assert len(plan.moves) == replicas_on(layout, victim)
    assert replicas_on(plan.target, victim) == 0
    for t in topics:
        for before, after in zip(t.replicas, plan.target[t.name]):
            assert len(after) == len(set(after)) == len(before)
            assert len(set(before) ^ set(after)) in (0, 2)
