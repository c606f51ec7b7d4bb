"""Plans start from who actually leads, and prefer moving small partitions."""
from __future__ import annotations

from collections import Counter

from planner.core import (Cluster, Options, Scenario, Spu, Topic, cluster_from_dict,
                          cluster_to_dict, plan)


def piled_up() -> Cluster:
    """Six SPUs, 12 partitions whose preferred leaders are balanced (two each)
    while SPU 0 actually leads every partition it holds after outages."""
    spus = tuple(Spu(i) for i in range(6))
    replicas = tuple(((p % 6), (p + 1) % 6, (p + 2) % 6) for p in range(12))
    actual = tuple(0 if 0 in reps else reps[0] for reps in replicas)
    return Cluster(spus, (Topic("t", replicas, leaders=actual),))


def test_before_figures_count_the_actual_leaders_not_the_preferred_ones():
    cluster = piled_up()
    led = Counter(cluster.topics[0].leaders)
    assert led[0] == 6  # SPU 0 holds half the partitions and leads them all
    result = plan(cluster, Scenario(), Options())
    assert result.before["leader_spread"] == max(led.values()) - min(led[s] for s in range(6))
    assert result.before["leader_spread"] == 6


def test_leader_balancing_starts_from_the_actual_leaders():
    result = plan(piled_up(), Scenario(), Options())
    assert result.metrics["leader_spread"] == 0
    # Four of SPU 0's six partitions must change leader: the plan counts them
    # against the actual leader, and no replica moves.
    assert result.metrics["leader_changes"] == 4
    assert result.metrics["replicas_moved"] == 0


def test_an_actual_leader_already_balanced_is_kept_even_if_not_first():
    spus = (Spu(0), Spu(1))
    topic = Topic("t", ((0, 1), (0, 1)), leaders=(1, 0))
    result = plan(Cluster(spus, (topic,)), Scenario(), Options())
    assert result.metrics["leader_changes"] == 0
    assert [reps[0] for reps in result.target["t"]] == [1, 0]


def test_an_unknown_actual_leader_falls_back_to_the_first_replica():
    topic = Topic("t", ((0, 1), (1, 0)), leaders=(None, 7))
    assert topic.current_leaders == (0, 1)


def test_actual_leaders_survive_the_json_form():
    cluster = piled_up()
    assert cluster_from_dict(cluster_to_dict(cluster)) == cluster


def test_bytes_moved_is_a_figure_when_sizes_are_known():
    spus = (Spu(0), Spu(1), Spu(2))
    topic = Topic("t", ((0, 1), (0, 1), (0, 1)), sizes=(100, 200, 300))
    result = plan(Cluster(spus, (topic,)), Scenario(), Options())
    moved = {m.partition: len(m.added) for m in result.moves}
    assert result.metrics["bytes_moved"] == sum(100 * (p + 1) * n for p, n in moved.items())
    assert result.metrics["bytes_moved"] is not None


def test_when_moves_tie_the_smallest_partitions_move():
    """SPUs 0 and 1 each give one replica to SPU 2, from two different
    partitions (one cannot hold SPU 2 twice): the two smallest go."""
    spus = (Spu(0), Spu(1), Spu(2))
    replicas = ((0, 1), (0, 1), (0, 1))
    for sizes in ((300, 200, 100), (100, 300, 200), (200, 100, 300)):
        result = plan(Cluster(spus, (Topic("t", replicas, sizes=sizes),)), Scenario(),
                      Options(balance_leaders=False))
        assert result.metrics["replicas_moved"] == 2
        assert result.metrics["bytes_moved"] == sum(sorted(sizes)[:2]), sizes
