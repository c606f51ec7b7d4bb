"""Plain-JSON forms of the planner's data (dicts of str, int, float, list, None).

Shapes:

* SPU: ``{"id": 1, "rack": "a" | null, "weight": 1.0}``
* cluster: ``{"spus": [SPU...], "topics": [{"name": "t", "partitions":
  [{"id": 0, "replicas": [1, 2]}], "sizes": [bytes...] | null,
  "leaders": [actual leader | null...] | null}]}``
* scenario: ``{"name": "...", "add_spus": [SPU...], "remove_spus": [ids],
  "lose_racks": [names], "replication": {"topic": rf}}``
* options: ``{"anti_affinity": true, "balance_leaders": true, "optimise_order": true}``
* plan: ``{"scenario": ..., "options": ..., "moves": [{"topic", "partition",
  "before", "after", "added", "removed", "leader_change"}], "metrics": {...,
  "before": {...}}, "target": {"topic": [{"id": 0, "replicas": [..]}]}}``
"""
from __future__ import annotations

from typing import Any, Mapping

from planner.core.model import (Cluster, Move, Options, Plan, PlanError, ReplicaMap,
                                Scenario, Spu, Topic)


def spu_to_dict(spu: Spu) -> dict[str, Any]:
    return {"id": spu.id, "rack": spu.rack, "weight": spu.weight}


def spu_from_dict(data: Mapping[str, Any]) -> Spu:
    try:
        return Spu(int(data["id"]), data.get("rack"), float(data.get("weight", 1.0)))
    except (KeyError, TypeError, ValueError) as error:
        raise PlanError(f"bad SPU {data!r}: {error}") from None


def replica_map_to_list(replica_map: ReplicaMap) -> list[dict[str, Any]]:
    return [{"id": pid, "replicas": list(reps)} for pid, reps in enumerate(replica_map)]


def replica_map_from_list(rows: list[Mapping[str, Any]]) -> ReplicaMap:
    by_id = {int(row["id"]): tuple(int(r) for r in row["replicas"]) for row in rows}
    if sorted(by_id) != list(range(len(by_id))):
        raise PlanError("partition ids must run from 0 without gaps")
    return tuple(by_id[p] for p in range(len(by_id)))


def cluster_to_dict(cluster: Cluster) -> dict[str, Any]:
    return {"spus": [spu_to_dict(s) for s in cluster.spus],
            "topics": [{"name": t.name, "partitions": replica_map_to_list(t.replicas),
                        "sizes": None if t.sizes is None else list(t.sizes),
                        "leaders": None if t.leaders is None else list(t.leaders)}
                       for t in cluster.topics]}


def cluster_from_dict(data: Mapping[str, Any]) -> Cluster:
    spus = tuple(spu_from_dict(s) for s in data.get("spus", ()))
    topics = []
    for row in data.get("topics", ()):
        sizes, leaders = row.get("sizes"), row.get("leaders")
        topics.append(Topic(str(row["name"]), replica_map_from_list(row["partitions"]),
                            None if sizes is None else tuple(int(b) for b in sizes),
                            None if leaders is None else tuple(
                                None if lead is None else int(lead) for lead in leaders)))
    return Cluster(spus, tuple(topics))


def scenario_to_dict(scenario: Scenario) -> dict[str, Any]:
    return {"name": scenario.name, "add_spus": [spu_to_dict(s) for s in scenario.add_spus],
            "remove_spus": list(scenario.remove_spus), "lose_racks": list(scenario.lose_racks),
            "replication": dict(scenario.replication)}


def scenario_from_dict(data: Mapping[str, Any]) -> Scenario:
    return Scenario(name=str(data.get("name", "rebalance")),
                    add_spus=tuple(spu_from_dict(s) for s in data.get("add_spus", ())),
                    remove_spus=tuple(int(i) for i in data.get("remove_spus", ())),
                    lose_racks=tuple(str(r) for r in data.get("lose_racks", ())),
                    replication=tuple(sorted((str(t), int(rf)) for t, rf
                                             in dict(data.get("replication", {})).items())))


def options_to_dict(options: Options) -> dict[str, Any]:
    return {"anti_affinity": options.anti_affinity, "balance_leaders": options.balance_leaders,
            "optimise_order": options.optimise_order}


def options_from_dict(data: Mapping[str, Any]) -> Options:
    return Options(**{k: bool(data[k]) for k in options_to_dict(Options()) if k in data})


def move_to_dict(move: Move) -> dict[str, Any]:
    return {"topic": move.topic, "partition": move.partition, "before": list(move.before),
            "after": list(move.after), "added": list(move.added), "removed": list(move.removed),
            "leader_change": move.leader_change}


def move_from_dict(data: Mapping[str, Any]) -> Move:
    return Move(data["topic"], int(data["partition"]), tuple(data["before"]),
                tuple(data["after"]), tuple(data["added"]), tuple(data["removed"]),
                bool(data["leader_change"]))


def plan_to_dict(plan: Plan) -> dict[str, Any]:
    return {"scenario": scenario_to_dict(plan.scenario), "options": options_to_dict(plan.options),
            "moves": [move_to_dict(m) for m in plan.moves],
            "metrics": {**plan.metrics, "before": dict(plan.before)},
            "target": {name: replica_map_to_list(m) for name, m in sorted(plan.target.items())}}


def plan_from_dict(data: Mapping[str, Any]) -> Plan:
    metrics = dict(data["metrics"])
    before = metrics.pop("before", {})
    return Plan(scenario_from_dict(data.get("scenario", {})),
                options_from_dict(data.get("options", {})),
                {name: replica_map_from_list(rows) for name, rows in data["target"].items()},
                tuple(move_from_dict(m) for m in data["moves"]), metrics, before)
