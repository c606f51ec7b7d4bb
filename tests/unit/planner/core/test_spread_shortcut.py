"""The whole-map rack spread gives what the per-partition definition gives."""
from __future__ import annotations

import random

from planner.core import Cluster, Spu, Topic
from planner.core.metrics import rack_violations
from planner.core.planner import current_facts
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


def test_the_current_layouts_rack_violations_skip_no_crowded_partition():
    # current_facts scans only topics its spread found crowded; the count
    # must equal a scan of every partition.
    rng = random.Random(78)
    counted = 0
    for _ in range(200):
        spus = tuple(Spu(i, rng.choice(["a", "b", "c", None])) for i in range(rng.randint(3, 7)))
        topics = tuple(Topic(f"t{k}", tuple(tuple(rng.sample(range(len(spus)), 2))
                                             for _ in range(rng.randint(1, 6))))
                       for k in range(rng.randint(1, 4)))
        cluster = Cluster(spus, topics)
        expected = rack_violations({t.name: t.replicas for t in topics},
                                   {s.id: s.rack for s in spus})
        assert current_facts(cluster).before["rack_violations"] == expected
        counted += expected > 0
    assert counted > 50
