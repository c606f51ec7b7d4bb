"""The store follows the replication core's replica-map changes and logs its move actions.

A reassignment (or its rollback) changes a partition's replica list in the hot
state; ``ReplicasChanged`` carries the new list, and the partition row and its
topic's replica map are rewritten with it so the planner, the pages and the
API read the same layout the engine replicates. Move and unclean-election
actions become events: they are what an operator audits after a plan or an
outage.
"""
from __future__ import annotations

import json
from typing import Any

from django.db import connection, transaction

from cluster.adapters.hot_state import HotState
from cluster.core.replication import (Action, Key, MoveCompleted, MoveProgressed,
                                      MoveRolledBack, MoveStarted, ReplicasChanged,
                                      UncleanLeaderElected)
from cluster.models import Event, Partition, Topic

CONTROLLER = "partition-controller"


def latest_replica_lists(actions: list[Action]) -> dict[Key, ReplicasChanged]:
    """The last list each partition reached in this step (a move may start and end in one)."""
    return {(a.topic, a.partition): a for a in actions if isinstance(a, ReplicasChanged)}


def mirror_replica_maps(hot: HotState, actions: list[Action]) -> list[Event]:
    """Write changed replica lists to partition rows and topic maps; return their events."""
    changes = latest_replica_lists(actions)
    if not changes:
        return []
    by_topic: dict[str, dict[int, list[int]]] = {}
    rows = []
    for key, change in changes.items():
        pk = hot.partition_pk(key)
        if pk is not None:
            rows.append((json.dumps(list(change.replicas)), pk))
            by_topic.setdefault(key[0], {})[key[1]] = list(change.replicas)
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.executemany(f"UPDATE {Partition._meta.db_table} SET replicas = %s "
                               f"WHERE id = %s", rows)
        for topic in Topic.objects.select_for_update().filter(name__in=list(by_topic)):
            replica_map = list(topic.replica_map)
            for index, replicas in by_topic[topic.name].items():
                if index < len(replica_map):
                    replica_map[index] = replicas
            Topic.objects.filter(pk=topic.pk).update(replica_map=replica_map)
    return [_replicas_event(c) for c in changes.values()]


def _event(topic: str, partition: int, operation: str, params: dict[str, Any],
           result: str = "") -> Event:
    return Event(actor=CONTROLLER, object_type="partition", object_name=f"{topic}/{partition}",
                 operation=operation, params=params, result=result)


def _replicas_event(a: ReplicasChanged) -> Event:
    return _event(a.topic, a.partition, "replicas", {
        "replicas": list(a.replicas), "adding": list(a.adding), "removing": list(a.removing)})


def move_events(actions: list[Action]) -> list[Event]:
    """One event per move start, progress, completion, rollback and unclean election."""
    return [e for e in map(_move_event, actions) if e is not None]


def _move_event(a: Action) -> Event | None:
    if isinstance(a, MoveStarted):
        return _event(a.topic, a.partition, "move-start",
                      {"original": list(a.original), "target": list(a.target)})
    if isinstance(a, MoveProgressed):
        return _event(a.topic, a.partition, "move-progress",
                      {"phase": a.phase.value, "caught_up": list(a.caught_up),
                       "records_copied": a.records_copied, "records_total": a.records_total})
    if isinstance(a, MoveCompleted):
        return _event(a.topic, a.partition, "move-complete",
                      {"replicas": list(a.replicas), "leader": a.leader})
    if isinstance(a, MoveRolledBack):
        return _event(a.topic, a.partition, "move-rollback", {"replicas": list(a.replicas)},
                      a.reason)
    if isinstance(a, UncleanLeaderElected):
        return _unclean_event(a)
    return None


def _unclean_event(a: UncleanLeaderElected) -> Event:
    how = "operator override" if a.forced else "topic allows unclean election"
    return _event(a.topic, a.partition, "unclean-election",
                  {"spu": a.spu, "old_hw": a.old_hw, "new_hw": a.new_hw,
                   "offsets_lost": a.offsets_lost, "forced": a.forced},
                  f"SPU {a.spu} leads without every committed record ({how}): "
                  f"{a.offsets_lost} committed offset(s) given up")
