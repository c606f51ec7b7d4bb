"""Operator intents as store rows: the projection of the log's intent entries (issue 32).

A service validates a command, appends its intent to the metadata log, and the store's
projection (``store.catch_up``) writes the rows and event rows from that entry, as it
does for the engine's entries: the log is written first, the rows follow from it. Only
entries marked ``log_first`` are applied here; an intent logged after its rows were
written (a controller's provision, a command run inside a caller's transaction, one
logged before this projection existed) is passed by, its rows being there already.

Every applier is idempotent: applying an entry a second time (a catch-up that died
before recording its offset, or a replay of the log from an earlier offset) leaves the
rows as once, and writes no second event row (events keep the entry's offset). A topic
keeps its row's id when its entry is applied again, since the engine's entries name it.

The intents of the other apps (a plan's apply, pause, resume, cancel; a self-healing
setting) are applied by the projections those apps hand the engine (``Engine.
intent_projections``, composition/bootstrap.py): the cluster knows their entries, not their rows.
"""
from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from itertools import chain
from typing import Any

from django.db.models import F

from cluster.projections.bulk_partitions import cheap_toast_compression, insert_partitions
from cluster.core.partitions import initial_partition_status
from cluster.core.replication import intents
from cluster.core.replication.state import Resolution
from cluster.core.spus import SpuResolution, SpuType
from cluster.engine import engine as engine_module
from cluster.models import ClusterState, Event, Partition, Spu, SpuGroup, Topic
from cluster.projections import aggregates

Entry = dict[str, Any]
LOG_FIRST = "log_first"
CONTROLLER = "topic-controller"


def is_log_first(entry: Entry) -> bool:
    return bool(entry.get(LOG_FIRST))


def apply(entry: Entry) -> list[Event]:
    """Write the rows ``entry`` describes; return its event rows (not saved yet)."""
    applier = _APPLIERS.get(entry["type"])
    if applier is not None:
        return applier(entry)
    theirs = engine_module.current().intent_projections.get(entry["type"])
    return [] if theirs is None else list(theirs(entry))


def writes_partition_rows(entry: Entry) -> bool:
    """Whether applying ``entry`` may write partition rows: a topic made, provisioned or
    dropped does; the SPU intents, a topic's settings and an outage write none (another
    app's intent, unknown here, may)."""
    return entry["type"] not in _ROW_FREE


def hold() -> None:
    """Take, for the rest of the caller's transaction, the lock every catch-up takes first:
    an intent appended while it is held is applied by the caller's own catch-up, which sees
    the rows the caller wrote before it (an SPU group's row), never by another process's,
    which could not and would pass the entry by. A write, so SQLite takes its lock too."""
    ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
    ClusterState.objects.filter(pk=ClusterState.SINGLETON).update(
        applied_offset=F("applied_offset"))


def _event(entry: Entry, object_type: str, name: object, operation: str,
           params: dict[str, Any] | None = None, result: str = "",
           actor: str | None = None) -> Event:
    return Event(actor=actor or entry.get("by") or "system", object_type=object_type,
                 object_name=str(name), operation=operation, params=params or {},
                 result=result)


def _topic_create(entry: Entry) -> list[Event]:
    """The topic's row (written again with the entry's values when it exists: a replay of
    the log keeps the row's id, which the engine's entries name) and, when none are
    there, its partitions' rows."""
    name, fields = entry["topic"], _topic_fields(entry)
    cheap_toast_compression()
    pk = Topic.objects.filter(name=name).values_list("pk", flat=True).first()
    if pk is None:
        # One INSERT with the map in it: an UPDATE after it wrote 1.4 MB of JSON again.
        topic = Topic(name=name, **fields)
        topic.save(force_insert=True)
        pk = topic.pk
    else:
        Topic.objects.filter(pk=pk).update(**fields)
    if "replica_map" in entry and not Partition.objects.filter(topic_id=pk).exists():
        _create_partitions(pk, entry)
    _set_cursor(entry)
    return [_event(entry, "topic", name, "create", entry["settings"]), *_transitions(entry)]


def _topic_fields(entry: Entry) -> dict[str, Any]:
    settings = entry["settings"]
    replica_map = entry.get("replica_map", [])
    manual = entry.get("manual_map")
    if settings.get("manual") and manual is None:
        manual = replica_map  # a provisioned manual topic's map is the file's
    return {"partitions": settings["partition_count"],
            "replication_factor": settings["replication"],
            "ignore_rack_assignment": settings["ignore_rack_assignment"],
            "manual_replica_map": manual, "min_lrs": settings["min_lrs"],
            "max_lag": settings["max_lag"],
            "unclean_leader_election": settings["unclean_leader_election"],
            "resolution": entry["resolution"], "reason": entry.get("reason", ""),
            "replica_map": replica_map, "assignment_start": entry.get("start_index")}


def _topic_provision(entry: Entry) -> list[Event]:
    """A waiting topic decided again: its status, and its partitions once provisioned."""
    name = entry["topic"]
    fields: dict[str, Any] = {"resolution": entry["resolution"],
                              "reason": entry.get("reason", "")}
    if "replica_map" in entry:
        fields.update(replica_map=entry["replica_map"], assignment_start=entry["start_index"])
    if not Topic.objects.filter(pk=entry["topic_pk"], name=name).update(**fields):
        return []  # deleted since
    if "replica_map" in entry and not Partition.objects.filter(
            topic_id=entry["topic_pk"]).exists():
        cheap_toast_compression()
        _create_partitions(entry["topic_pk"], entry)
    _set_cursor(entry)
    return _transitions(entry)


def _set_cursor(entry: Entry) -> None:
    if entry.get("cursor") is not None:
        # The cursor the command read plus what it used: the same on a second application.
        ClusterState.objects.filter(pk=ClusterState.SINGLETON).update(
            assignment_cursor=entry["cursor"])


def _transitions(entry: Entry) -> list[Event]:
    return [_event(entry, "topic", entry["topic"], "resolution", {"from": before, "to": after},
                   entry.get("reason", ""), actor=CONTROLLER)
            for before, after in entry.get("transitions", ())]


def _create_partitions(pk: int, entry: Entry) -> None:
    replica_map = entry["replica_map"]
    if "leaders" in entry:  # as a real cluster has them (``cluster import``)
        leaders, lrs = entry["leaders"], entry["lrs"]
        resolutions = [Resolution.OFFLINE.value if lead is None else Resolution.ONLINE.value
                       for lead in leaders]
    elif entry.get("offline"):
        online = set(chain.from_iterable(replica_map)) - set(entry["offline"])
        statuses = [initial_partition_status(replicas, online) for replicas in replica_map]
        leaders = [s.leader for s in statuses]
        lrs = [s.lrs for s in statuses]
        resolutions = [s.resolution for s in statuses]
    else:  # every replica's SPU is online: each starts Online, led by its first replica
        leaders = [replicas[0] for replicas in replica_map]
        lrs, resolutions = replica_map, [Resolution.ONLINE.value] * len(replica_map)
    insert_partitions(pk, replica_map, leaders, lrs, resolutions)
    aggregates.add_columns(pk, replica_map, leaders, lrs)


def _topic_delete(entry: Entry) -> list[Event]:
    pk = Topic.objects.filter(name=entry["topic"]).values_list("pk", flat=True).first()
    if pk is None:
        return []
    aggregates.remove_topic(pk)
    Topic.objects.filter(pk=pk).delete()
    return [_event(entry, "topic", entry["topic"], "delete")]


def _topic_update(entry: Entry) -> list[Event]:
    changed = entry["changed"]
    Topic.objects.filter(name=entry["topic"]).update(
        **{field: change["to"] for field, change in changed.items()})
    out = []
    if "producer_rate" in changed:
        out.append(_event(entry, "topic", entry["topic"], "producer-rate",
                          changed["producer_rate"]))
    return out


def _spu_register(entry: Entry) -> list[Event]:
    spu = entry["spu"]
    fields = {"rack": entry["rack"], "public_endpoint": entry["public"],
              "private_endpoint": entry["private"]}
    created: dict[str, Any] = {"spu_type": SpuType.CUSTOM.value, **fields}
    if "group" in entry:  # a managed SPU: its group's
        group = SpuGroup.objects.filter(name=entry["group"]).first()
        if group is None:
            return []  # the group's creation rolled back, or it was deleted since: no SPU
        created.update(spu_type=SpuType.MANAGED.value, group=group)
    Spu.objects.update_or_create(id=spu, defaults=fields, create_defaults=created)
    if "group" in entry:
        return [_event(entry, "spu", spu, "provision", {"group": entry["group"]})]
    return [_event(entry, "spu", spu, "register", {"rack": entry["rack"],
                                                  "public": entry["public"],
                                                  "private": entry["private"]})]


def _spu_unregister(entry: Entry) -> list[Event]:
    spu = entry["spu"]
    deleted, _ = Spu.objects.filter(pk=spu).delete()
    if not deleted:
        return []
    if "group" in entry:
        return [_event(entry, "spu", spu, "terminate", {"group": entry["group"]})]
    return [_event(entry, "spu", spu, "unregister",
                   {"forced": True} if entry.get("forced") else None)]


def _spu_update(entry: Entry) -> list[Event]:
    changed = entry["changed"]
    Spu.objects.filter(pk=entry["spu"]).update(
        **{field: change["to"] for field, change in changed.items()})
    return [_event(entry, "spu", entry["spu"], "update", changed)]


def _spu_status(entry: Entry) -> list[Event]:
    fields: dict[str, Any] = {"resolution": entry["to"]}
    if entry["to"] == SpuResolution.ONLINE.value:
        fields["last_heartbeat"] = datetime.fromtimestamp(entry["at"] / 1000, tz=timezone.utc)
    if not Spu.objects.filter(pk=entry["spu"]).update(**fields):
        return []
    return [_event(entry, "spu", entry["spu"], "resolution",
                   {"from": entry["from"], "to": entry["to"]})]


def _outage(entry: Entry) -> list[Event]:
    """The outage's own events; the SPUs' statuses are ``spu-status`` entries of their own
    (a killed loop changes no row: the engine reads the killed set)."""
    action, spus = entry["action"], entry["spus"]
    out = []
    if entry.get("rack") is not None:
        out.append(_event(entry, "rack", entry["rack"], action, {"spus": spus}))
    if action in ("kill", "online"):
        out += [_event(entry, "spu", spu, "kill" if action == "kill" else "start")
                for spu in spus]
    return out


_APPLIERS: dict[str, Callable[[Entry], list[Event]]] = {
    intents.TOPIC_CREATE: _topic_create, intents.TOPIC_PROVISION: _topic_provision,
    intents.TOPIC_DELETE: _topic_delete,
    intents.TOPIC_UPDATE: _topic_update, intents.SPU_REGISTER: _spu_register,
    intents.SPU_UNREGISTER: _spu_unregister, intents.SPU_UPDATE: _spu_update,
    intents.SPU_STATUS: _spu_status, intents.OUTAGE: _outage,
}
# The appliers above that write no partition row (``writes_partition_rows``).
_ROW_FREE = frozenset({intents.TOPIC_UPDATE, intents.SPU_REGISTER, intents.SPU_UNREGISTER,
                       intents.SPU_UPDATE, intents.SPU_STATUS, intents.OUTAGE})
