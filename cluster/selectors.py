"""Reads shared by pages, the API and commands."""
from __future__ import annotations

from collections import defaultdict

from cluster.models import Partition, Spu, Topic


def spus_by_rack() -> dict[str, list[Spu]]:
    racks: dict[str, list[Spu]] = defaultdict(list)
    for spu in Spu.objects.order_by("rack", "id"):
        racks[spu.rack or "(no rack)"].append(spu)
    return dict(sorted(racks.items()))


def topic_describe(topic: Topic) -> dict[str, object]:
    """The shape of ``topic describe --json``: the file format plus status."""
    return {"name": topic.name, "resolution": topic.resolution, "reason": topic.reason,
            "partitions": [{"id": i, "replicas": r} for i, r in enumerate(topic.replica_map)],
            "partition_count": topic.partitions, "replication": topic.replication_factor,
            "ignore_rack_assignment": topic.ignore_rack_assignment,
            "min_lrs": topic.min_lrs, "max_lag": topic.max_lag,
            "manual": topic.is_manual}


def spu_describe(spu: Spu) -> dict[str, object]:
    return {"id": spu.id, "type": spu.spu_type, "rack": spu.rack or None,
            "public": spu.public_endpoint, "private": spu.private_endpoint,
            "resolution": spu.resolution,
            "group": spu.group.name if spu.group_id else None}


def partition_rows(topic_name: str | None = None) -> list[dict[str, object]]:
    query = Partition.objects.select_related("topic").order_by("topic__name", "index")
    if topic_name:
        query = query.filter(topic__name=topic_name)
    return [{"topic": p.topic.name, "partition": p.index, "leader": p.leader,
             "replicas": p.replicas, "lrs": p.lrs, "resolution": p.resolution,
             "hw": p.hw, "leo": p.leo} for p in query]
