"""Provisional partition status until the replication engine takes over."""
from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import NamedTuple


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


class UnderReplicatedStart(NamedTuple):
    """A partition whose replicas are not all on online SPUs when it is created."""
    partition: int
    offline_spus: tuple[int, ...]
    live_replicas: int

    @property
    def reason(self) -> str:
        spus = ", ".join(map(str, self.offline_spus))
        verb = "is" if len(self.offline_spus) == 1 else "are"
        return f"SPU {spus} {verb} registered but not online"


def under_replicated_starts(replica_map: Sequence[Sequence[int]],
                            online: Collection[int]) -> list[UnderReplicatedStart]:
    """Partitions that would start with fewer live replicas than their replication factor."""
    starts = []
    for pid, replicas in enumerate(replica_map):
        offline = tuple(s for s in replicas if s not in online)
        if offline:
            starts.append(UnderReplicatedStart(pid, offline, len(replicas) - len(offline)))
    return starts


def under_replicated_summary(starts: Sequence[UnderReplicatedStart], total: int) -> str:
    """One sentence for people: how many partitions start short, and which SPUs are why."""
    if not starts:
        return ""
    spus = sorted({s for start in starts for s in start.offline_spus})
    verb = "is" if len(spus) == 1 else "are"
    return (f"{len(starts)} of {total} partition{'s' if total != 1 else ''} start "
            f"under-replicated: SPU {', '.join(map(str, spus))} {verb} registered but not online")
