"""The cluster as the detector reads it: one snapshot of the store (SPUs, partitions, LRS)."""
from __future__ import annotations

import time
from datetime import datetime
from typing import Any

from cluster.core.spus import SpuResolution
from cluster.core.topic_controller import TopicResolution
from cluster.models import Event, Partition, Spu, Topic
from cluster.ports import applied_offset, store_namespace
from healing.core import PartitionView, Snapshot, SpuView


# The partitions last read, by what they were read at: the check runs every few seconds and
# reading 100,000 rows took seconds of a worker each time, though nothing had moved.
_read: dict[str, tuple[tuple[Any, ...], tuple[PartitionView, ...]]] = {}


def cluster_snapshot(at_ms: int | None = None) -> Snapshot:
    spus = tuple(SpuView(i, rack or None, res == SpuResolution.ONLINE.value)
                 for i, rack, res in Spu.objects.order_by("id").values_list("id", "rack",
                                                                            "resolution"))
    topics = {pk: (name, factor, not ignore, count, created)
              for pk, name, factor, ignore, count, created in Topic.objects.filter(
                  resolution=TopicResolution.PROVISIONED.value).values_list(
                  "pk", "name", "replication_factor", "ignore_rack_assignment", "partitions",
                  "created_at")}
    return Snapshot(spus, _partitions(topics),
                    at_ms if at_ms is not None else int(time.time() * 1000))


def spus_down_since(at: datetime | None) -> set[int]:
    """SPUs that went down (any resolution but online) since ``at``, even if back now:
    the snapshot shows only where they are, not where they were in between."""
    if at is None:
        return set()
    changes = Event.objects.filter(object_type="spu", operation="resolution", at__gte=at) \
        .exclude(params__to=SpuResolution.ONLINE.value).values_list("object_name", flat=True)
    return {int(name) for name in changes if name.isdigit()}


def _partitions(topics: dict[int, tuple[Any, ...]]) -> tuple[PartitionView, ...]:
    """The partitions' replicas, LRS and leader, read again only when they may have moved.

    Those columns are written by the metadata log's projection alone, in the transaction
    that records the offset it reached; topic create and delete change the topic rows.
    So the same applied offset and the same topics (each created when it was) mean the
    same rows."""
    read_at = (applied_offset(), tuple(sorted(topics.items())))
    kept = _read.get(store_namespace())
    if kept is not None and kept[0] == read_at:
        return kept[1]
    rows = Partition.objects.filter(topic_id__in=list(topics)).values_list(
        "topic_id", "index", "replicas", "lrs", "leader")
    partitions = tuple(PartitionView(topics[t][0], index, tuple(replicas), tuple(lrs or ()),
                                     leader, topics[t][1], topics[t][2])
                       for t, index, replicas, lrs, leader in rows)
    _read.clear()  # one store per process in practice; tests switch between several
    _read[store_namespace()] = (read_at, partitions)
    return partitions
