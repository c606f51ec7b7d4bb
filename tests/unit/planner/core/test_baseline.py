from __future__ import annotations

import random

from planner.core import Cluster, Scenario, Spu, Topic, generate_plan, plan
from planner.core.baseline import assign_rack_aware, assign_rack_unaware, rack_alternated


class FixedRandom(random.Random):
    def __init__(self, *values: int) -> None:
        super().__init__(0)
        self.values = list(values)

    def randrange(self, *_):  # type: ignore[override]
        return self.values.pop(0)


def test_rack_unaware_generate_shifts_followers_after_each_round():
    # 5 brokers, start 0, shift 0: leaders 0..4, followers one and two after,
    # then the shift grows by one for the second round.
    result = assign_rack_unaware([0, 1, 2, 3, 4], 10, 3, FixedRandom(0, 0))
    assert result[:5] == ((0, 1, 2), (1, 2, 3), (2, 3, 4), (3, 4, 0), (4, 0, 1))
    assert result[5:] == ((0, 2, 3), (1, 3, 4), (2, 4, 0), (3, 0, 1), (4, 1, 2))


def test_rack_alternated_list_takes_one_broker_per_rack_in_turn():
    spus = [Spu(0, "a"), Spu(1, "a"), Spu(2, "b"), Spu(3, "c"), Spu(4, "c")]
    assert [s.id for s in rack_alternated(spus)] == [0, 2, 3, 1, 4]


def test_rack_aware_generate_never_puts_two_replicas_in_one_rack():
    spus = [Spu(i, "abc"[i % 3]) for i in range(9)]
    rack_of = {s.id: s.rack for s in spus}
    for seed in range(20):
        for reps in assign_rack_aware(spus, 30, 3, random.Random(seed)):
            assert len({rack_of[s] for s in reps}) == 3


def test_generate_is_reproducible_with_a_seed_and_moves_far_more_than_the_planner():
    spus = tuple(Spu(i, "ab"[i % 2]) for i in range(6))
    topics = tuple(Topic(f"t{k}", tuple(((p + k) % 6, (p + k + 1) % 6) for p in range(12)))
                   for k in range(3))
    cluster = Cluster(spus, topics)
    scenario = Scenario("add", add_spus=(Spu(6, "a"),))
    first = generate_plan(cluster, scenario, seed=3)
    assert first == generate_plan(cluster, scenario, seed=3)
    assert first.metrics["replicas_moved"] > plan(cluster, scenario).metrics["replicas_moved"]
