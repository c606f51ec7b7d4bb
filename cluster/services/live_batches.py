"""Live updates from the replication shell, batched for the pages.

A page listens to one group; each group gets at most ``MAX_PER_SECOND``
messages a second (a Redis counter per group and second). A topic with few
changed partitions gets one ``partition.changed`` each; a busy one gets one
``cluster.changed`` (object_type "topic", operation "partitions") telling its
page to refresh from a snapshot. The cluster group hears one ``cluster.changed``
(object_type "partitions", operation "status") per step that moved a leader,
an LRS or a resolution.
"""
from __future__ import annotations

import logging
import time
from collections import defaultdict

from django.db import transaction

from cluster import hot_state
from cluster.core.replication import Key
from cluster.hot_state import Summary

log = logging.getLogger(__name__)
MAX_PER_SECOND = 10
PER_PARTITION_UP_TO = 5


def publish_partitions(changes: list[tuple[Key, Summary]], *, events: int) -> None:
    if changes or events:
        transaction.on_commit(lambda: _publish(changes, events))


def _publish(changes: list[tuple[Key, Summary]], events: int) -> None:
    try:
        from cluster.live import CLUSTER_GROUP, publish, topic_group
    except ImportError:  # the dashboard's live module is not there
        return
    by_topic: dict[str, list[tuple[Key, Summary]]] = defaultdict(list)
    for key, summary in changes:
        by_topic[key[0]].append((key, summary))
    try:
        for topic, items in by_topic.items():
            _publish_topic(publish, topic_group(topic), topic, items)
        if events and _budget(CLUSTER_GROUP, 1):
            publish(CLUSTER_GROUP, {"type": "cluster.changed", "object_type": "partitions",
                                    "object_name": str(events), "operation": "status"})
    except Exception:  # a page missing an update must not fail a replication step
        log.exception("live update failed")


def _publish_topic(publish, group: str, topic: str, items: list[tuple[Key, Summary]]) -> None:
    if len(items) <= PER_PARTITION_UP_TO and _budget(group, len(items)):
        for (_, partition), s in items:
            publish(group, {"type": "partition.changed", "topic": topic, "partition": partition,
                            "leader": s[0], "lrs": list(s[1]), "resolution": s[2].value, "hw": s[3],
                            "leo": s[4] if s[4] is not None else 0})
    elif _budget(group, 1):
        publish(group, {"type": "cluster.changed", "object_type": "topic",
                        "object_name": topic, "operation": "partitions"})


def _budget(group: str, wanted: int) -> bool:
    """Take ``wanted`` messages from this second's allowance of the group."""
    key = f"{hot_state.PREFIX}live:{group}:{int(time.time())}"
    pipe = hot_state.client().pipeline()
    pipe.incrby(key, wanted)
    pipe.expire(key, 2)
    used, _ = pipe.execute()
    return used <= MAX_PER_SECOND
