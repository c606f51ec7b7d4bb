"""One line per plan metric, for the workbench tables (definitions: planner/core/metrics.py)."""
from __future__ import annotations

from django import template

register = template.Library()

METRIC_HELP = {
    "replicas_moved": "Replica copies to SPUs that did not hold the partition.",
    "partitions_changed": "Partitions whose replica list changes, leader or order only included.",
    "bytes_moved": "Data copied: the partition's size for every replica moved.",
    "leader_changes": "Partitions whose preferred leader (first replica) changes.",
    "lower_bound": "Replica copies any balanced plan must make; no plan can move fewer.",
    "moved_to_lower_bound": "Replicas moved over the lower bound: 1.00 is the fewest possible.",
    "search_stopped_early": "Topics whose placement search stopped at its time budget: "
                            "their moves may exceed the fewest (0: every search finished).",
    "replica_spread": "Most minus fewest replicas on one SPU: 0 or 1 is as even as it gets.",
    "leader_spread": "Most minus fewest leaders on one SPU.",
    "topic_replica_spread": "Replica spread within a single topic; the worst topic.",
    "topic_leader_spread": "Leader spread within a single topic; the worst topic.",
    "rack_violations": "Partitions with two replicas in one rack (0 is rack-safe).",
    "failover_concentration": "If one SPU fails, the largest share of its leaders that one "
                              "other SPU takes over; lower spreads the load (worst SPU).",
}


@register.filter
def metric_help(key: str) -> str:
    return METRIC_HELP.get(key, "")


@register.filter
def metric_name(key: str) -> str:
    """replica_spread -> "replica spread"."""
    return key.replace("_", " ")
