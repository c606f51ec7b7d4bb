"""Read a Fluvio cluster from its own list outputs (pure, standard library).

``fluvio partition list -O json`` and ``fluvio cluster spu list -O json`` print, with
``serde_json::to_string_pretty``, a list of ``Metadata<Spec>`` objects: ``{"name",
"spec", "status"}`` (checked in infinyon/fluvio: fluvio-sc-schema objects/metadata.rs,
fluvio-controlplane-metadata partition/spec.rs, partition/status.rs, spu/spec.rs):

* a partition: ``name`` ``"<topic>-<partition>"``; ``spec.leader`` (SPU id) and
  ``spec.replicas`` (ids, the leader among them); ``status.resolution`` (``Online``,
  ``Offline``, ``LeaderOffline``, ``ElectionLeaderFound``, ``OutOfStorage``),
  ``status.leader`` and ``status.replicas`` (``{"spu", "hw", "leo"}``), ``status.lsr``
  (a count: how many replicas are in sync), ``status.size`` (the leader's bytes; -1 an
  error, -2 not supported);
* an SPU: ``spec.spuId``, ``spec.rack`` (absent when unset), ``spec.publicEndpoint``
  (``{"port", "ingress": [{"hostname", "ip"}], ...}``), ``status.resolution``.

They become what the Kafka parsers give (describe, log dirs, brokers), so ``assemble``
checks and builds the snapshot the same way. Fluvio names only how many replicas are in
the LRS, not which: the leader and the followers with the highest LEO are taken (a
warning says so where not every replica is in sync). A size is the leader's figure,
stood for every replica; Fluvio reports no disk capacity.
"""
from __future__ import annotations

import json
from typing import Any

from planner.core.kafka_import.brokers import Broker
from planner.core.kafka_import.describe import DescribedPartition, DescribedTopic
from planner.core.kafka_import.errors import ImportFormatError
from planner.core.kafka_import.log_dirs import BrokerDisks
from planner.core.kafka_import.snapshot import Snapshot, assemble

LED = {"Online", "ElectionLeaderFound", "OutOfStorage"}
RESOLUTIONS = LED | {"Offline", "LeaderOffline"}


def _document(text: str, source: str, shape: str) -> list[Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise ImportFormatError(source, error.lineno,
                                f"JSON ({error.msg} at column {error.colno})") from None
    except RecursionError:
        raise ImportFormatError(source, 1, "JSON nested at most a few levels") from None
    if not isinstance(data, list):
        raise ImportFormatError(source, 1, f"a JSON list of {shape} (the -O json output)")
    return data


def _id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def parse_fluvio_partitions(text: str, source: str = "partitions"
                            ) -> tuple[list[DescribedTopic], dict[int, BrokerDisks], list[str]]:
    """Topics as a describe gives them, sizes as log dirs give them, and notes."""
    items = _document(text, source, '{"name", "spec", "status"} partitions')
    parts: dict[str, dict[int, DescribedPartition]] = {}
    sizes: dict[tuple[str, int], int] = {}
    notes: list[str] = []
    for index, item in enumerate(items, start=1):
        where = f"item {index}"
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ImportFormatError(source, 1, f'{where}: {{"name": "topic-N", "spec", '
                                    '"status"}')
        topic, _, number = item["name"].rpartition("-")
        if not topic or not number.isdigit():
            raise ImportFormatError(source, 1, f"{where}: a name <topic>-<partition>",
                                    item["name"])
        spec, status = item.get("spec"), item.get("status")
        if not isinstance(spec, dict) or not isinstance(spec.get("replicas"), list) or \
                not spec["replicas"] or not all(_id(r) for r in spec["replicas"]) or \
                not _id(spec.get("leader")):
            raise ImportFormatError(source, 1, f'{where}: "spec": {{"leader": id, '
                                    '"replicas": [ids]}')
        if not isinstance(status, dict) or status.get("resolution") not in RESOLUTIONS:
            raise ImportFormatError(source, 1, f'{where}: "status": {{"resolution": one of '
                                    f'{", ".join(sorted(RESOLUTIONS))}, ...}}')
        pid, replicas = int(number), tuple(spec["replicas"])
        if pid in parts.setdefault(topic, {}):
            raise ImportFormatError(source, 1, f"{where}: partition {item['name']} listed once")
        leader = spec["leader"] if status["resolution"] in LED else None
        lrs = _lrs(leader, replicas, status)
        if leader is not None and len(lrs) < len(replicas):
            notes.append(f"{item['name']}: {len(lrs)} of {len(replicas)} replicas in sync; "
                         "Fluvio gives a count, the LRS taken is the leader and the "
                         "followers with the highest LEO")
        parts[topic][pid] = DescribedPartition(pid, leader, replicas, lrs, 1)
        size = status.get("size", -2)
        if _id(size):
            sizes[(topic, pid)] = size
        elif isinstance(size, int) and size == -1:
            notes.append(f"{item['name']}: Fluvio reported an error for its size")
    topics = [DescribedTopic(name, max(p) + 1, len(p[min(p)].replicas), {}, 1, None, p)
              for name, p in parts.items()]
    for t in topics:
        missing = [p for p in range(t.partition_count) if p not in t.partitions]
        if missing:
            raise ImportFormatError(source, 1, f"partitions 0..{t.partition_count - 1} of "
                                    f"topic {t.name} (partition {missing[0]} is missing)")
    disks: dict[int, BrokerDisks] = {}
    if sizes:
        for t in topics:
            for pid, part in t.partitions.items():
                if (t.name, pid) in sizes:
                    for spu in part.replicas:
                        disks.setdefault(spu, BrokerDisks(spu)).sizes[(t.name, pid)] = \
                            sizes[(t.name, pid)]
    return topics, disks, notes


def _lrs(leader: int | None, replicas: tuple[int, ...], status: dict) -> tuple[int, ...]:
    if leader is None:
        return ()
    count: Any = status.get("lsr", status.get("lrs"))
    if not _id(count) or count >= len(replicas):
        return replicas
    leo: dict[int, int] = {}
    for row in status.get("replicas") or []:
        if isinstance(row, dict) and _id(row.get("spu")) and isinstance(row.get("leo"), int):
            leo[row["spu"]] = row["leo"]
    followers = sorted((r for r in replicas if r != leader),
                       key=lambda r: (-leo.get(r, -1), replicas.index(r)))
    keep = {leader, *followers[:max(0, count - 1)]}
    return tuple(r for r in replicas if r in keep)


def parse_fluvio_spus(text: str, source: str = "spus") -> dict[int, Broker]:
    """SPU id -> its rack and public endpoint."""
    out: dict[int, Broker] = {}
    for index, item in enumerate(_document(text, source, '{"name", "spec", "status"} SPUs'),
                                 start=1):
        spec = item.get("spec") if isinstance(item, dict) else None
        if not isinstance(spec, dict) or not _id(spec.get("spuId")):
            raise ImportFormatError(source, 1, f'item {index}: "spec": {{"spuId": id, ...}}')
        rack = spec.get("rack")
        if rack is not None and not isinstance(rack, str):
            raise ImportFormatError(source, 1, f'item {index}: "rack": a string')
        public: dict = spec.get("publicEndpoint") or {}
        if not isinstance(public, dict):
            public = {}
        host = ""
        for addr in public.get("ingress") or []:
            name = (addr.get("hostname") or addr.get("ip")) if isinstance(addr, dict) else None
            if isinstance(name, str):
                host = name
                break
        port: int = public["port"] if _id(public.get("port")) else 0
        if spec["spuId"] in out:
            raise ImportFormatError(source, 1, f"item {index}: SPU {spec['spuId']} listed once")
        out[spec["spuId"]] = Broker(spec["spuId"], host, port, rack or None, 1)
    return out


def import_fluvio(partitions: str, spus: str | None = None, *,
                  names: tuple[str, str] = ("partitions", "spus")) -> Snapshot:
    topics, disks, notes = parse_fluvio_partitions(partitions, names[0])
    known = parse_fluvio_spus(spus, names[1]) if spus is not None else None
    snapshot = assemble(topics, disks or None, known, names[0])
    shown = notes[:20] + ([f"... and {len(notes) - 20} more"] if len(notes) > 20 else [])
    endpoints = {b.id: b.endpoint for b in (known or {}).values() if b.host and b.port}
    return Snapshot(snapshot.cluster, snapshot.isr, snapshot.min_insync, snapshot.capacities,
                    endpoints, (*snapshot.warnings, *shown))
