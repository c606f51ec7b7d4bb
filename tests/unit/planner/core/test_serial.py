from __future__ import annotations

import json

from planner.core import (LAYOUT_KEYS, MOVEMENT_KEYS, Cluster, Options, Scenario, Spu, Topic,
                          cluster_from_dict, cluster_to_dict, options_from_dict, options_to_dict,
                          plan, plan_from_dict, plan_to_dict, scenario_from_dict, scenario_to_dict)


def cluster() -> Cluster:
    spus = (Spu(0, "a"), Spu(1, "b", 2.0), Spu(2))
    return Cluster(spus, (Topic("t", ((0, 1), (1, 2), (2, 0)), (5, 6, 7)),))


def test_cluster_scenario_and_options_survive_plain_json():
    scenario = Scenario("what if", add_spus=(Spu(3, "a"),), remove_spus=(2,),
                        lose_racks=("b",), replication=(("t", 1),))
    options = Options(anti_affinity=False, balance_leaders=True, optimise_order=False)
    assert cluster_from_dict(json.loads(json.dumps(cluster_to_dict(cluster())))) == cluster()
    assert scenario_from_dict(json.loads(json.dumps(scenario_to_dict(scenario)))) == scenario
    assert options_from_dict(json.loads(json.dumps(options_to_dict(options)))) == options


def test_a_plan_prints_moves_metrics_and_target_and_reads_back():
    result = plan(cluster(), Scenario("add", add_spus=(Spu(3, "c"),)))
    data = json.loads(json.dumps(plan_to_dict(result)))
    assert {"moves", "metrics", "target"} <= set(data)
    assert data["target"]["t"][0] == {"id": 0, "replicas": list(result.target["t"][0])}
    assert set(MOVEMENT_KEYS) | set(LAYOUT_KEYS) <= set(data["metrics"])
    assert set(LAYOUT_KEYS) <= set(data["metrics"]["before"])
    assert {"topic", "partition", "before", "after", "added", "removed",
            "leader_change"} == set(data["moves"][0])
    assert data["metrics"]["bytes_moved"] == sum(
        len(m.added) * (5, 6, 7)[m.partition] for m in result.moves)
    assert plan_from_dict(data) == result
