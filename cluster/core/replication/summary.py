"""Per-partition summaries in the shape of `fluvio partition list`."""
from __future__ import annotations

from typing import TypedDict

from .state import ClusterState, ReplicaSet


class ReplicaStatus(TypedDict):
    spu: int
    leo: int
    hw: int


class PartitionSummary(TypedDict):
    topic: str
    partition: int
    leader: int | None
    replicas: list[int]
    lrs: list[int]
    resolution: str
    hw: int
    leo: int | None
    replica_status: list[ReplicaStatus]


def partition_summary(rs: ReplicaSet) -> PartitionSummary:
    """leo is the leader's LEO (None while there is no leader); hw the committed HW."""
    return PartitionSummary(
        topic=rs.topic, partition=rs.partition, leader=rs.leader,
        replicas=list(rs.replicas), lrs=list(rs.lrs), resolution=rs.resolution.value,
        hw=rs.hw, leo=rs.leo,
        replica_status=[ReplicaStatus(spu=s, leo=rs.replica[s].leo, hw=rs.replica[s].hw)
                        for s in rs.replicas])


def partition_list(state: ClusterState, topic: str | None = None) -> list[PartitionSummary]:
    keys = sorted(k for k in state.replica_sets if topic is None or k[0] == topic)
    view = state.steady.view  # a steady set's followers as the index keeps them
    return [partition_summary(view(state.replica_sets[k])) for k in keys]
