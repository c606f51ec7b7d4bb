"""Work a grid's scenarios share is computed once without changing any plan."""
from __future__ import annotations

from planner.core import Cluster, Options, Scenario, Spu, Topic, plan, standard_grid
from planner.core.planner import current_facts


def cluster() -> Cluster:
    spus = tuple(Spu(i, f"r{i % 3}") for i in range(6))
    topics = (Topic("a", tuple(((p) % 6, (p + 1) % 6) for p in range(6))),
              Topic("b", tuple(((p + 2) % 6, (p + 4) % 6) for p in range(4))))
    return Cluster(spus, topics)


def test_an_equal_cluster_object_gets_the_same_plans_as_the_cached_one():
    first, second = cluster(), cluster()
    for scenario in standard_grid(first, up_to=1):
        assert plan(first, scenario) == plan(second, scenario)


def test_the_current_layout_metrics_are_the_plans_before_figures():
    c = cluster()
    assert plan(c).before == current_facts(c).before


def test_a_topic_at_its_quotas_keeps_its_replica_sets_when_another_topic_changes():
    c = cluster()
    result = plan(c, Scenario("rf", replication=(("b", 1),)), Options(balance_leaders=False))
    assert [set(r) for r in result.target["a"]] == [set(r) for r in c.topic("a").replicas]
