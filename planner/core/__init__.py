"""Pure what-if rebalancing planner (standard library only).

Build a ``Cluster`` (or read one with ``parse_kafka_reassignment`` /
``cluster_from_dict``), describe a ``Scenario``, call ``plan`` and read the
``Plan``; ``plan_to_dict`` gives the JSON the CLI prints. ``generate_plan``
is the ``kafka-reassign-partitions --generate`` baseline. Metric names and
definitions live in ``planner.core.metrics``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from cluster.core.lazy import lazy_exports

# Each module loads when one of its names is first used (cluster/core/lazy.py): the
# models need a few enums, not every rule of the core, at every command's start.
if TYPE_CHECKING:
    from planner.core.baseline import generate_plan
    from planner.core.kafka_io import (ReassignmentError, fluvio_assignments, kafka_reassignment,
                                       parse_kafka_reassignment)
    from planner.core.metrics import LAYOUT_KEYS, MOVEMENT_KEYS
    from planner.core.model import (Cluster, Move, Options, Plan, PlanError, ReplicaMap,
                                    Replicas, Scenario, Spu, Topic)
    from planner.core.planner import Prepared, local_map, plan, prepare
    from planner.core.scenarios import (apply_scenario, rack_additions, rack_losses,
                                        single_removals, standard_grid)
    from planner.core.serial import (cluster_from_dict, cluster_to_dict, options_from_dict,
                                     options_to_dict, plan_from_dict, plan_to_dict,
                                     scenario_from_dict, scenario_to_dict)


__all__ = [
    "Cluster", "LAYOUT_KEYS", "MOVEMENT_KEYS", "Move", "Options", "Plan", "PlanError",
    "Prepared", "ReassignmentError", "ReplicaMap", "Replicas", "Scenario", "Spu", "Topic",
    "apply_scenario", "cluster_from_dict", "cluster_to_dict", "fluvio_assignments",
    "generate_plan", "kafka_reassignment", "local_map", "options_from_dict",
    "options_to_dict", "parse_kafka_reassignment", "plan", "plan_from_dict", "plan_to_dict",
    "prepare", "rack_additions", "rack_losses", "scenario_from_dict", "scenario_to_dict",
    "single_removals", "standard_grid",
]

if not TYPE_CHECKING:
    lazy_exports(__name__, __file__)
