"""The cluster as the detector reads it: one snapshot of the store (SPUs, partitions, LRS)."""
from __future__ import annotations

import time

from cluster.core.spus import SpuResolution
from cluster.core.topic_controller import TopicResolution
from cluster.models import Partition, Spu, Topic
from healing.core import PartitionView, Snapshot, SpuView


def cluster_snapshot(at_ms: int | None = None) -> Snapshot:
    spus = tuple(SpuView(i, rack or None, res == SpuResolution.ONLINE.value)
                 for i, rack, res in Spu.objects.order_by("id").values_list("id", "rack",
                                                                            "resolution"))
    topics = {pk: (name, factor, not ignore) for pk, name, factor, ignore in Topic.objects.filter(
        resolution=TopicResolution.PROVISIONED.value).values_list(
        "pk", "name", "replication_factor", "ignore_rack_assignment")}
    rows = Partition.objects.filter(topic_id__in=list(topics)).values_list(
        "topic_id", "index", "replicas", "lrs", "leader")
    partitions = tuple(PartitionView(topics[t][0], index, tuple(replicas), tuple(lrs or ()),
                                     leader, topics[t][1], topics[t][2])
                       for t, index, replicas, lrs, leader in rows)
    return Snapshot(spus, partitions, at_ms if at_ms is not None else int(time.time() * 1000))
