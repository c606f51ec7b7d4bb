"""Live updates: the payloads pages receive and the one helper that publishes them.

Groups: ``cluster`` for cluster-wide changes, ``topic-<name>`` per topic.
Services call ``publish`` after commit (``transaction.on_commit``), so a page
never hears of a change that was rolled back. The ``type`` of each payload
names the consumer handler that forwards it (``cluster.changed`` ->
``cluster_changed``).
"""
from __future__ import annotations

from typing import Literal, TypedDict, Union

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

CLUSTER_GROUP = "cluster"


class ClusterChanged(TypedDict):
    """Something cluster-wide changed: an SPU, a group, a topic's resolution."""
    type: Literal["cluster.changed"]
    object_type: str     # "spu", "spu-group", "topic"
    object_name: str
    operation: str       # as in the event log: "register", "resolution", ...


class PartitionChanged(TypedDict):
    """A partition's status moved (leader, LRS, HW, LEO, resolution)."""
    type: Literal["partition.changed"]
    topic: str
    partition: int
    leader: int | None
    lrs: list[int]
    hw: int
    leo: int
    resolution: str


class TopicChanged(TypedDict):
    type: Literal["topic.changed"]
    topic: str
    resolution: str
    reason: str


Payload = Union[ClusterChanged, PartitionChanged, TopicChanged]


def topic_group(name: str) -> str:
    return f"topic-{name}"


def publish(group: str, payload: Payload) -> None:
    """Send ``payload`` to every socket in ``group``; callable from sync code."""
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(group, dict(payload))
