"""The streamed plan (layout kept on the executors) against the in-process plan."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from planner.core import Cluster, Options, PlanError, Scenario, Spu, Topic, plan
from planner.core.metrics import LAYOUT_KEYS
from planner.spark import plan_streamed, topics_from_cluster

pytestmark = pytest.mark.spark

SAME_FIGURES = ("replicas_moved", "lower_bound", "bytes_moved", "replica_spread",
                "leader_spread", "topic_replica_spread", "topic_leader_spread",
                "rack_violations")


def uneven_cluster(seed: int, sizes: bool = False) -> Cluster:
    """2,000 partitions at RF 3 on 40 SPUs in 5 racks, placed at random (so
    some partitions share a rack and SPUs are unevenly loaded), leaders not
    always the first replica."""
    rng = random.Random(seed)
    spus = tuple(Spu(i, f"rack-{i % 5}") for i in range(40))
    topics = []
    for k in range(40):
        replicas = tuple(tuple(rng.sample(range(36), 3)) for _ in range(50))
        leaders = tuple(reps[rng.randrange(3)] for reps in replicas)
        topics.append(Topic(f"t{k:02d}", replicas,
                            tuple(rng.randrange(1, 1000) for _ in replicas) if sizes else None,
                            leaders))
    return Cluster(spus, tuple(topics))


def moved_layout(cluster: Cluster, moves_dir: Path) -> dict[str, tuple]:
    layout = {t.name: list(t.replicas) for t in cluster.topics}
    for part in sorted(moves_dir.glob("part-*")):
        for line in part.read_text().splitlines():
            move = json.loads(line)
            assert tuple(layout[move["topic"]][move["partition"]]) == tuple(move["before"])
            layout[move["topic"]][move["partition"]] = tuple(move["after"])
    return {name: tuple(map(tuple, reps)) for name, reps in layout.items()}


def test_the_streamed_plan_moves_what_the_in_process_plan_moves(spark, tmp_path):
    cluster = uneven_cluster(seed=1, sizes=True)
    scenario = Scenario("add four", add_spus=tuple(Spu(40 + i, f"rack-{i}") for i in range(4)))
    expected = plan(cluster, scenario)
    streamed = plan_streamed(spark, cluster.spus, topics_from_cluster(spark, cluster.topics, 6),
                             scenario, moves_dir=str(tmp_path / "moves"))
    for key in SAME_FIGURES:
        assert streamed.metrics[key] == expected.metrics[key], key
    assert streamed.metrics["replicas_moved"] > 0 and streamed.metrics["leader_changes"] > 0
    assert streamed.before == expected.before
    assert (streamed.topics, streamed.partitions) == (40, 2000)
    target = moved_layout(cluster, tmp_path / "moves")
    # Same replica sets everywhere; leaders and follower order may differ within a class.
    assert {n: [frozenset(r) for r in m] for n, m in target.items()} == \
        {n: [frozenset(r) for r in m] for n, m in expected.target.items()}
    assert set(LAYOUT_KEYS) <= set(streamed.metrics)


def test_the_streamed_plan_matches_in_process_with_removal_rf_change_and_no_racks(spark):
    cluster = uneven_cluster(seed=2)
    scenario = Scenario("shrink", remove_spus=(3, 17), replication=(("t05", 2), ("t06", 4)))
    for options in (Options(), Options(anti_affinity=False, optimise_order=False),
                    Options(balance_leaders=False)):
        expected = plan(cluster, scenario, options)
        streamed = plan_streamed(spark, cluster.spus,
                                 topics_from_cluster(spark, cluster.topics, 4), scenario, options)
        for key in SAME_FIGURES:
            assert streamed.metrics[key] == expected.metrics[key], (options, key)
        assert streamed.before == expected.before


def test_a_topic_on_an_unknown_spu_or_a_repeated_name_is_refused_by_the_driver(spark):
    cluster = uneven_cluster(seed=3)
    stray = Topic("stray", ((0, 1, 99),))
    with pytest.raises(PlanError, match="unknown SPU 99"):
        plan_streamed(spark, cluster.spus, topics_from_cluster(spark, (*cluster.topics, stray), 2))
    with pytest.raises(PlanError, match="unique"):
        plan_streamed(spark, cluster.spus,
                      topics_from_cluster(spark, (*cluster.topics, cluster.topics[0]), 2))


def test_the_streamed_plan_matches_in_process_on_racks_too_small_for_their_share(spark):
    """RF 4 over racks of 6, 3 and 1 SPUs (issue 19): the rack caps, the
    spread check and the secure counts are the driver's and executors' too."""
    rng = random.Random(19)
    spus = tuple(Spu(i, "a" if i < 6 else "b" if i < 9 else "c") for i in range(10))
    topics = tuple(Topic(f"t{k}", tuple(tuple(rng.sample(range(10), 3)) for _ in range(23)))
                   for k in range(6))
    cluster = Cluster(spus, topics)
    scenario = Scenario("rf 4, lose one", remove_spus=(2,),
                        replication=tuple((f"t{k}", 4) for k in range(0, 6, 2)))
    expected = plan(cluster, scenario)
    streamed = plan_streamed(spark, cluster.spus, topics_from_cluster(spark, cluster.topics, 3),
                             scenario)
    for key in SAME_FIGURES:
        assert streamed.metrics[key] == expected.metrics[key], key
    assert streamed.before == expected.before
    assert expected.metrics["rack_violations"] == 0 < expected.before["rack_violations"]
