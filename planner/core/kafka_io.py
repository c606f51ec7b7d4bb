"""Kafka reassignment JSON and Fluvio replica assignment files, in and out.

Kafka: ``{"version": 1, "partitions": [{"topic": "t", "partition": 0,
"replicas": [1, 2, 3]}]}`` (what ``kafka-reassign-partitions`` reads and
writes). Fluvio: one file per topic, ``{"partitions": [{"id": 0,
"replicas": [0, 1, 2]}]}``.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping

from planner.core.model import Cluster, Plan, PlanError, Spu, Topic


class ReassignmentError(PlanError):
    """A reassignment document is malformed (the message says where)."""


def parse_kafka_reassignment(document: str | Mapping[str, Any],
                             spus: Iterable[Spu] | None = None,
                             sizes: Mapping[str, Mapping[int, int]] | None = None) -> Cluster:
    """The current layout from a reassignment JSON (text or parsed).

    SPUs named in the document but absent from ``spus`` are added without a
    rack; every topic must list partitions 0..n-1 exactly once.
    """
    data = _load(document)
    entries = _entries(data)
    by_topic: dict[str, dict[int, tuple[int, ...]]] = {}
    for index, entry in enumerate(entries):
        topic, partition, replicas = _entry(entry, index)
        if partition in by_topic.setdefault(topic, {}):
            raise ReassignmentError(f"partitions[{index}]: {topic}/{partition} listed twice")
        by_topic[topic][partition] = replicas
    known = {s.id: s for s in (spus or ())}
    for replicas in (r for parts in by_topic.values() for r in parts.values()):
        for spu in replicas:
            known.setdefault(spu, Spu(spu))
    topics = tuple(_topic(name, parts, (sizes or {}).get(name))
                   for name, parts in sorted(by_topic.items()))
    return Cluster(tuple(sorted(known.values(), key=lambda s: s.id)), topics)


def _load(document: str | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(document, str):
        try:
            document = json.loads(document)
        except json.JSONDecodeError as error:
            raise ReassignmentError(f"not JSON: {error.msg} at line {error.lineno}") from None
        except RecursionError:
            raise ReassignmentError("not a reassignment file: JSON nested too deeply") from None
    if not isinstance(document, Mapping):
        raise ReassignmentError("the document must be a JSON object")
    return document


def _entries(data: Mapping[str, Any]) -> list:
    if data.get("version") != 1:
        raise ReassignmentError('"version" must be 1')
    entries = data.get("partitions")
    if not isinstance(entries, list):
        raise ReassignmentError('"partitions" must be a list')
    return entries


def _entry(entry: Any, index: int) -> tuple[str, int, tuple[int, ...]]:
    where = f"partitions[{index}]"
    if not isinstance(entry, Mapping):
        raise ReassignmentError(f"{where}: must be an object")
    topic, partition, replicas = entry.get("topic"), entry.get("partition"), entry.get("replicas")
    if not isinstance(topic, str) or not _KAFKA_TOPIC.match(topic):
        raise ReassignmentError(f'{where}: "topic" must be a Kafka topic name (1 to 249 '
                                f'letters, digits, ".", "_" or "-")')
    if not _is_count(partition):
        raise ReassignmentError(f'{where}: "partition" must be a non-negative integer')
    if not isinstance(replicas, list) or not replicas:
        raise ReassignmentError(f'{where}: "replicas" must be a non-empty list')
    if not all(_is_count(r) for r in replicas):
        raise ReassignmentError(f'{where}: "replicas" must hold non-negative integers')
    if len(set(replicas)) != len(replicas):
        raise ReassignmentError(f"{where}: a replica is listed twice")
    return topic, partition, tuple(replicas)


# Kafka's legal topic names; the store cannot hold some other characters (NUL on PostgreSQL).
_KAFKA_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}\Z")


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _topic(name: str, parts: Mapping[int, tuple[int, ...]],
           sizes: Mapping[int, int] | None) -> Topic:
    missing = [p for p in range(len(parts)) if p not in parts]
    if missing:
        raise ReassignmentError(f"topic {name}: partition {missing[0]} is missing")
    lengths = {len(r) for r in parts.values()}
    if len(lengths) > 1:
        raise ReassignmentError(f"topic {name}: partitions have different replica counts")
    replicas = tuple(parts[p] for p in range(len(parts)))
    size_list = None if sizes is None else tuple(int(sizes.get(p, 0)) for p in range(len(parts)))
    return Topic(name, replicas, size_list)


def kafka_reassignment(plan: Plan, only_changed: bool = True) -> dict[str, Any]:
    """The plan as a Kafka reassignment document (changed partitions by default)."""
    if only_changed:
        rows = [(m.topic, m.partition, m.after) for m in plan.moves]
    else:
        rows = [(name, pid, reps) for name in sorted(plan.target)
                for pid, reps in enumerate(plan.target[name])]
    return {"version": 1, "partitions": [
        {"topic": t, "partition": p, "replicas": list(r)} for t, p, r in rows]}


def fluvio_assignments(plan: Plan) -> dict[str, dict[str, Any]]:
    """One Fluvio replica assignment file body per topic."""
    return {name: {"partitions": [{"id": pid, "replicas": list(reps)}
                                  for pid, reps in enumerate(replica_map)]}
            for name, replica_map in sorted(plan.target.items())}
