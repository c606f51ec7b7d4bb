"""Provisional partition status until the replication engine takes over."""
from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class PartitionStatus:
    leader: int | None
    lrs: list[int]
    resolution: str


def initial_partition_status(replicas: Sequence[int],
                             online: Collection[int]) -> PartitionStatus:
    """003's Add Partition: Offline unless some replica's SPU is online.

    The first online replica in order leads, so a partition whose preferred
    leader is down starts with a live leader instead of none.
    """
    live = [spu for spu in replicas if spu in online]
    if not live:
        return PartitionStatus(None, [], "Offline")
    return PartitionStatus(live[0], live, "Online")
