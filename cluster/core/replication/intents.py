"""Operator intents: the changes an operator makes, as metadata-log entries (issue 32).

A service appends one of these once it validated the command (who made it is
added by the service), before any row is written: the store's rows are the
projection of the entry (cluster/projections/intents.py), the log holds the change
at the moment it was made, and replay (``history.apply``) shows it with no worker
running. The engine's own entries that follow (``topic-replicated``,
``spu``, ``spu-rack``, ...) say the same again or more; folding an intent and then
those gives what folding those alone gives, so an intent never contradicts them.

An intent logged after its rows (a controller's provision, a command inside a
caller's transaction) is not marked ``log_first`` and the projections pass it by.
"""
from __future__ import annotations

from collections.abc import Collection, Sequence
from itertools import chain
from typing import Any

Entry = dict[str, Any]

TOPIC_CREATE = "topic-create"
TOPIC_PROVISION = "topic-provision"  # a waiting topic a cluster change provisioned
TOPIC_DELETE = "topic-delete"
TOPIC_UPDATE = "topic-update"  # "topic-config" is the engine's entry of applied settings
SPU_REGISTER = "spu-register"
SPU_UNREGISTER = "spu-unregister"
SPU_UPDATE = "spu-update"
SPU_STATUS = "spu-status"  # the store's status of an SPU, as a service wrote it
OUTAGE = "outage"
# What an operator asked of a plan or of self-healing: logged first too, their rows (the
# planner's and healing's, which the cluster does not know) written by projections those
# apps hand the engine (composition/bootstrap.py, ``Engine.intent_projections``).
PLAN_CONTROL = "plan-control"
HEALING_SET = "healing-set"
PLAN_ACTIONS = ("apply", "pause", "resume", "cancel")

# What an outage does to an SPU as replay sees it: the store's status, the loop.
OUTAGE_ACTIONS = ("offline", "online", "kill")
KINDS = frozenset({TOPIC_CREATE, TOPIC_PROVISION, TOPIC_DELETE, TOPIC_UPDATE, SPU_REGISTER,
                   SPU_UNREGISTER, SPU_UPDATE, SPU_STATUS, OUTAGE, PLAN_CONTROL, HEALING_SET})


def _placement(replica_map: Sequence[Sequence[int]], online: Collection[int]) -> Entry:
    """A topic's partitions as they start: the map, and which SPUs it names are offline
    (usually none: each partition then starts Online, led by its first replica)."""
    # The map as given (JSON writes tuples as lists): a copy cost 30 ms at 100,000 partitions.
    named = set(chain.from_iterable(replica_map))
    return {"replica_map": replica_map, "offline": sorted(named - set(online))}


def topic_create(topic: str, topic_pk: int | None, settings: Entry,
                 replica_map: Sequence[Sequence[int]] | None = None,
                 online: Collection[int] = ()) -> Entry:
    """A created topic; with its partitions when it was provisioned at once. Logged
    before its row exists (the row is its projection), it has no ``topic_pk``."""
    entry: Entry = {"type": TOPIC_CREATE, "topic": topic, "settings": settings}
    if topic_pk is not None:
        entry["topic_pk"] = topic_pk
    return entry if replica_map is None else {**entry, **_placement(replica_map, online)}


def topic_provision(topic: str, topic_pk: int, replica_map: Sequence[Sequence[int]] | None,
                    online: Collection[int]) -> Entry:
    """A waiting topic a cluster change decided again: with its partitions when it was
    provisioned, else only its new status (in the fields the service adds)."""
    entry: Entry = {"type": TOPIC_PROVISION, "topic": topic, "topic_pk": topic_pk}
    return entry if replica_map is None else {**entry, **_placement(replica_map, online)}


def topic_delete(topic: str, topic_pk: int) -> Entry:
    return {"type": TOPIC_DELETE, "topic": topic, "topic_pk": topic_pk}


def topic_update(topic: str, changed: dict[str, dict[str, Any]]) -> Entry:
    """Settings changed: ``{name: {"from": old, "to": new}}``."""
    return {"type": TOPIC_UPDATE, "topic": topic, "changed": changed}


def spu_register(spu: int, rack: str, public: str, private: str,
                 group: str | None = None) -> Entry:
    """An SPU registered; ``group``: a managed SPU an SPU group provisioned."""
    entry: Entry = {"type": SPU_REGISTER, "spu": spu, "rack": rack, "public": public,
                    "private": private}
    return entry if group is None else {**entry, "group": group}


def spu_unregister(spu: int, forced: bool, group: str | None = None) -> Entry:
    """An SPU forgotten; ``group``: a managed SPU its group terminated."""
    entry: Entry = {"type": SPU_UNREGISTER, "spu": spu, "forced": forced}
    return entry if group is None else {**entry, "group": group}


def spu_update(spu: int, changed: dict[str, dict[str, Any]]) -> Entry:
    """A new rack or endpoints: ``{"rack": {"from": a, "to": b}, ...}`` (model field names)."""
    return {"type": SPU_UPDATE, "spu": spu, "changed": changed}


def spu_status(spu: int, old: str, new: str) -> Entry:
    """An SPU's status written by a service (an operator's outage, the connection manager
    admitting it): ``Online`` or ``Offline``."""
    return {"type": SPU_STATUS, "spu": spu, "from": old, "to": new}


def outage(action: str, spus: Sequence[int], rack: str | None = None) -> Entry:
    """SPUs taken offline, brought online or their loops killed, one by one or a rack."""
    if action not in OUTAGE_ACTIONS:
        raise ValueError(f"unknown outage action {action!r}")
    entry: Entry = {"type": OUTAGE, "action": action, "spus": list(spus)}
    return entry if rack is None else {**entry, "rack": rack}


def plan_control(action: str, plan_id: int, params: Entry | None = None,
                 reason: str | None = None) -> Entry:
    """A plan applied (with its throttles), paused, resumed or cancelled; ``reason``: why a
    cancel was made when not by the operator's own word (pre-empted by another plan)."""
    if action not in PLAN_ACTIONS:
        raise ValueError(f"unknown plan action {action!r}")
    entry: Entry = {"type": PLAN_CONTROL, "action": action, "plan": plan_id}
    if params:
        entry["params"] = params
    return entry if reason is None else {**entry, "reason": reason}


def healing_set(name: str, value: Any) -> Entry:
    """A self-healing setting changed (``mode`` for enable / notify-only / disable)."""
    return {"type": HEALING_SET, "name": name, "value": value}


def starting_statuses(entry: Entry) -> list[tuple[list[int], int | None, list[int], bool]]:
    """Each partition of a created or provisioned topic as it starts: (replicas, leader,
    LRS, online), as the command stored it (003's Add Partition: the first live replica
    leads; with none live the partition starts Offline)."""
    offline = set(entry.get("offline") or ())
    out = []
    for replicas in entry["replica_map"]:
        live = [s for s in replicas if s not in offline]
        out.append((list(replicas), live[0] if live else None, live, bool(live)))
    return out
