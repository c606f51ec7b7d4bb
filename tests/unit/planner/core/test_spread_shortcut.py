"""The whole-map rack spread gives what the per-partition definition gives."""
from __future__ import annotations

import random

from planner.core.spread import map_spread, topic_spread


def test_map_spread_equals_topic_spread_on_random_maps():
    rng = random.Random(77)
    crowded = 0
    for _ in range(500):
        spus = rng.randint(3, 9)
        key = {s: f"rack-{s % rng.randint(1, 4)}" for s in range(spus)}
        replica_map = [tuple(rng.sample(range(spus), rng.randint(1, min(4, spus))))
                       for _ in range(rng.randint(0, 12))]
        expected = topic_spread([key[s] for s in reps] for reps in replica_map)
        assert map_spread(replica_map, key) == expected
        crowded += expected.most_in_one > 1
    assert crowded > 100  # the cases do include partitions crowding a rack
