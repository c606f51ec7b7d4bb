"""The three files put together: the planner's cluster, plus what only an import knows
(ISR, min.insync.replicas, disk capacities, endpoints) and every contradiction as a warning.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from planner.core.kafka_import.brokers import Broker
from planner.core.kafka_import.describe import DescribedTopic
from planner.core.kafka_import.errors import ImportFormatError
from planner.core.kafka_import.log_dirs import BrokerDisks
from planner.core.model import Cluster, Spu, Topic

# Listed warnings per kind before the rest are only counted (a 100,000-partition file
# with one systematic mistake should not print 100,000 lines).
SHOWN_PER_KIND = 20


@dataclass
class Warnings:
    shown: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, kind: str, text: str) -> None:
        seen = self.counts.get(kind, 0)
        self.counts[kind] = seen + 1
        if seen < SHOWN_PER_KIND:
            self.shown.append(text)

    def as_list(self) -> list[str]:
        more = [f"... and {n - SHOWN_PER_KIND} more of kind {kind}"
                for kind, n in sorted(self.counts.items()) if n > SHOWN_PER_KIND]
        return self.shown + more


@dataclass(frozen=True)
class Snapshot:
    cluster: Cluster
    isr: Mapping[str, tuple[tuple[int, ...], ...]]
    min_insync: Mapping[str, int]
    capacities: Mapping[int, int]
    endpoints: Mapping[int, str]
    warnings: tuple[str, ...]

    def summary(self) -> dict[str, Any]:
        sizes = [s for t in self.cluster.topics if t.sizes for s in t.sizes]
        return {"brokers": len(self.cluster.spus),
                "racks": sorted({s.rack for s in self.cluster.spus if s.rack}),
                "topics": len(self.cluster.topics),
                "partitions": sum(t.partitions for t in self.cluster.topics),
                "sized": bool(sizes), "partition_bytes": sum(sizes),
                "capacities": {str(k): v for k, v in sorted(self.capacities.items())},
                "warnings": list(self.warnings)}


def assemble(topics: list[DescribedTopic], disks: Mapping[int, BrokerDisks] | None = None,
             brokers: Mapping[int, Broker] | None = None,
             describe_source: str = "describe") -> Snapshot:
    warnings = Warnings()
    named: set[int] = set()
    out_topics, isr, min_insync = [], {}, {}
    for topic in topics:
        built, topic_isr = _topic(topic, disks, warnings, describe_source)
        out_topics.append(built)
        isr[topic.name] = topic_isr
        if topic.min_insync is not None:
            min_insync[topic.name] = min(topic.min_insync, topic.replication)
        for reps in built.replicas:
            named.update(reps)
    if disks:
        _stray_replicas(topics, disks, warnings)
        named.update(disks)
    known = dict(brokers or {})
    if brokers is not None:
        for spu in sorted(named - known.keys()):
            warnings.add("undescribed-broker", f"broker {spu} is named in the describe or log "
                         "dirs but not in the broker list: imported without a rack")
    racks = {b.id: b.rack for b in known.values()}
    spus = tuple(Spu(i, racks.get(i)) for i in sorted(named | known.keys()))
    capacities = {b: d.total_bytes for b, d in (disks or {}).items() if d.total_bytes}
    return Snapshot(Cluster(spus, tuple(out_topics)), isr, min_insync, capacities,
                    {b.id: b.endpoint for b in known.values()}, tuple(warnings.as_list()))


def _topic(topic: DescribedTopic, disks: Mapping[int, BrokerDisks] | None, warnings: Warnings,
           source: str) -> tuple[Topic, tuple[tuple[int, ...], ...]]:
    parts = [topic.partitions[p] for p in range(topic.partition_count)]
    width = len(parts[0].replicas) if parts else 0
    for part in parts:
        if len(part.replicas) != width:
            raise ImportFormatError(source, part.line, f"{width} replicas like partition 0 of "
                                    f"topic {topic.name} (a reassignment in progress? import "
                                    "once it has finished)")
    leaders, isr = [], []
    for part in parts:
        lead = part.leader
        if lead is not None and lead not in part.replicas:
            warnings.add("leader", f"{topic.name}-{part.partition}: leader {lead} is not one "
                         "of its replicas; imported as leaderless")
            lead = None
        stray = [s for s in part.isr if s not in part.replicas]
        if stray:
            warnings.add("isr", f"{topic.name}-{part.partition}: Isr {stray} not among its "
                         "replicas; left out")
        leaders.append(lead)
        isr.append(tuple(s for s in part.isr if s in part.replicas))
    sizes = _sizes(topic, parts, disks, warnings) if disks else None
    return (Topic(topic.name, tuple(p.replicas for p in parts), sizes, tuple(leaders)),
            tuple(isr))


def _sizes(topic: DescribedTopic, parts: list, disks: Mapping[int, BrokerDisks],
           warnings: Warnings) -> tuple[int, ...]:
    """One size per partition: the leader's copy where the log dirs have it (followers
    may trail), else the largest copy reported."""
    sizes = []
    for part in parts:
        key = (topic.name, part.partition)
        held = {b: disks[b].sizes[key] for b in part.replicas
                if b in disks and key in disks[b].sizes}
        missing = [b for b in part.replicas if b in disks and b not in held]
        if missing:
            warnings.add("missing-replica", f"{topic.name}-{part.partition}: the log dirs of "
                         f"broker {missing[0]} do not hold this replica")
        if part.leader in held:
            sizes.append(held[part.leader])
        else:
            sizes.append(max(held.values(), default=0))
    return tuple(sizes)


def _stray_replicas(topics: list[DescribedTopic], disks: Mapping[int, BrokerDisks],
                    warnings: Warnings) -> None:
    described = {t.name: t for t in topics}
    for broker, disk in sorted(disks.items()):
        for error in disk.errors:
            warnings.add("log-dir-error", f"broker {broker} log dir {error}")
        for (name, pid) in disk.sizes:
            topic = described.get(name)
            if topic is None or pid not in topic.partitions:
                warnings.add("unknown-partition", f"{name}-{pid} is on broker {broker}'s disk "
                             "but not in the describe")
            elif broker not in topic.partitions[pid].replicas:
                warnings.add("stray-replica", f"{name}-{pid} is on broker {broker}'s disk but "
                             "the describe does not list it as a replica")
