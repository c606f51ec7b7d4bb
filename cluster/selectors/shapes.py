"""The JSON shapes of describe and list outputs (``--json`` of the commands, the API)."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from cluster.core.replication.state import Resolution as PartitionResolution
from cluster.core.replication.summary import PartitionSummary
from cluster.models import Partition, Spu, Topic
from cluster.selectors.hot_offsets import Offsets, hot_offsets


def topic_describe(topic: Topic) -> dict[str, object]:
    """The shape of ``topic describe --json``: the file format plus status."""
    return {"name": topic.name, "resolution": topic.resolution, "reason": topic.reason,
            "partitions": [{"id": i, "replicas": r} for i, r in enumerate(topic.replica_map)],
            "partition_count": topic.partitions, "replication": topic.replication_factor,
            "ignore_rack_assignment": topic.ignore_rack_assignment,
            "min_lrs": topic.min_lrs, "max_lag": topic.max_lag,
            "unclean_leader_election": topic.unclean_leader_election,
            "manual": topic.is_manual}


def spu_describe(spu: Spu) -> dict[str, object]:
    return {"id": spu.id, "type": spu.spu_type, "rack": spu.rack or None,
            "public": spu.public_endpoint, "private": spu.private_endpoint,
            "resolution": spu.resolution,
            "group": spu.group.name if spu.group_id else None}


class PartitionRow(PartitionSummary):
    """One partition as ``partition list --json`` and the API show it: the core's
    summary of a replica set, plus the preferred leader (its first replica) and,
    for an Offline partition, the SPUs it waits for (its last LRS members)."""
    preferred_leader: int | None
    waiting_for: list[int]
    reason: str


def offline_reason(waiting: Sequence[int]) -> str:
    """Why an Offline partition has no leader: the clean rule waits for these SPUs."""
    if not waiting:
        return ""
    spus = ", ".join(map(str, waiting))
    return (f"waiting for SPU {spus} (last LRS member{'s' if len(waiting) > 1 else ''}) "
            f"to return; `leader elect --unclean` would give up committed records")


def partition_row(p: Partition, offsets: Offsets | None = None) -> PartitionRow:
    """From a stored row (with its topic loaded); replicas never reported show 0/0.
    ``offsets``: the set's HW/LEO from the hot state, else the row's (which trail it by
    the offsets mirror's interval at most: engine/mirror.py)."""
    if offsets is None:
        status = p.replica_status or [{"spu": s, "leo": 0, "hw": 0} for s in p.replicas]
        offsets = Offsets(p.hw, p.leo, status)
    # An Offline set keeps its last LRS members: they are the SPUs it waits for.
    waiting = list(p.lrs) if p.resolution == PartitionResolution.OFFLINE.value else []
    return PartitionRow(topic=p.topic.name, partition=p.index, leader=p.leader,
                        preferred_leader=p.initial_leader, replicas=p.replicas, lrs=p.lrs,
                        resolution=p.resolution, hw=offsets.hw, leo=offsets.leo,
                        replica_status=offsets.replica_status,
                        waiting_for=waiting, reason=offline_reason(waiting))


def partition_rows_live(partitions: Iterable[Partition]) -> list[PartitionRow]:
    """Stored rows (a page of them) with their offsets read from the hot state; the
    status columns are the store's (the log's projection), as every row's."""
    rows = list(partitions)
    live = hot_offsets((p.topic.name, p.index) for p in rows)
    return [partition_row(p, live.get((p.topic.name, p.index))) for p in rows]


def row_from_summary(summary: PartitionSummary, waiting: Sequence[int] = ()) -> PartitionRow:
    """From the replication's hot state (the core's summary of a replica set)."""
    replicas = summary["replicas"]
    return PartitionRow(**summary, preferred_leader=replicas[0] if replicas else None,
                        waiting_for=list(waiting), reason=offline_reason(waiting))


# A partition row needs its topic's name only: loading the topic's replica map with
# each row decoded 100,000 entries per row of a 100,000-partition topic.
TOPIC_MAPS = ("topic__replica_map", "topic__manual_replica_map")


def partition_rows(topic_name: str | None = None) -> list[PartitionRow]:
    query = (Partition.objects.select_related("topic").defer(*TOPIC_MAPS)
             .order_by("topic__name", "index"))
    if topic_name:
        query = query.filter(topic__name=topic_name)
    return [partition_row(p) for p in query]


def group_describe(group) -> dict[str, object]:
    """An SPU group as `spg list --json` and the API show it."""
    return {"name": group.name, "replicas": group.replicas, "min_id": group.min_id,
            "rack": group.rack or None, "storage_size": group.storage_size,
            "resolution": group.resolution, "reason": group.reason,
            "spus": sorted(group.spus.values_list("id", flat=True))}
