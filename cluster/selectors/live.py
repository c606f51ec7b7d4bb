"""Snapshots a live page resyncs from: the same shape as a live message, read now.

Partitions come from the Redis hot state (the store mirrors it a moment later);
a topic not replicating yet falls back to its stored rows. The group's sequence
is read first, so the data is at least as new as the sequence it claims.
"""
from __future__ import annotations

import time
from typing import Literal

from cluster.adapters import hot_state
from cluster.adapters.live_batches import current_seq, live_row
from cluster.core.replication import netview
from cluster.live import (BLOCK, LiveData, PartitionRow, Stamp, TopicRow, parse_group,
                          stamp)
from cluster.models import Event, Partition, Topic
from cluster.projections.announce import event_row
from cluster.projections.live import cluster_load

# The cluster snapshot lists the newest events, as the overview shows them.
EVENTS_SHOWN = 10


class LiveSnapshot(Stamp, LiveData):
    type: Literal["live.snapshot"]


def live_snapshot(group: str) -> LiveSnapshot | None:
    """The group's current state, or None for a group no page joins."""
    parsed = parse_group(group)
    if parsed is None:
        return None
    seq = current_seq(group)
    name, block = parsed
    if name is None:
        data = _cluster()
    elif block is None:
        data = {"topics": _topics(name)}
    else:
        data = {"partitions": block_rows(name, block)}
    return {"type": "live.snapshot", **stamp(group, seq), **data}


def _cluster() -> LiveData:
    data = cluster_load()
    data["events"] = [event_row(e) for e in Event.objects.all()[:EVENTS_SHOWN]][::-1]
    # The link matrix and rehearsal summary pages patch from ``net`` messages.
    data["net"] = netview.view(hot_state.load(keys=[]).state, int(time.time() * 1000))
    return data


def _topics(name: str) -> list[TopicRow]:
    return [TopicRow(**r) for r in Topic.objects.filter(name=name)
            .values("name", "resolution", "reason")]


def block_rows(name: str, block: int) -> list[PartitionRow]:
    partitions = Topic.objects.filter(name=name).values_list("partitions", flat=True).first()
    keys = [(name, i) for i in range(block * BLOCK, min((block + 1) * BLOCK, partitions or 0))]
    if not keys:
        return []
    if name in hot_state.replicated_topics():
        sets = hot_state.load(keys).state.replica_sets
        return [live_row(k, hot_state.summary(sets[k])) for k in keys if k in sets]
    rows = Partition.objects.filter(topic__name=name, index__gte=keys[0][1],
                                    index__lte=keys[-1][1]).order_by("index")
    return [{"topic": name, "partition": p.index, "leader": p.leader, "lrs": list(p.lrs),
             "hw": p.hw, "leo": p.leo, "resolution": p.resolution} for p in rows]
