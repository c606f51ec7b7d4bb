"""``kafka-topics.sh --describe`` text: one topic line, then one line per partition.

Confirmed against Apache Kafka's TopicCommand (tools/.../TopicCommand.java): fields are
``Name: value`` pairs separated by tabs. A topic line is ``Topic: T`` [``TopicId: U``,
absent on old brokers and for the zero id] ``PartitionCount: N ReplicationFactor: R
Configs: k=v,...`` (only overridden configs), optionally ``MarkedForDeletion: true``. A
partition line starts with a tab: ``Topic: T Partition: P Leader: L|none Replicas: a,b
Isr: a,b`` then, during a reassignment, ``Adding Replicas:`` / ``Removing Replicas:``,
and on newer versions ``Elr:`` / ``LastKnownElr:`` (``N/A`` where unknown). Older
versions wrote ``Topic:T`` with no space; both are read.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from planner.core.kafka_import.errors import ImportFormatError

_TOPIC = re.compile(r"[a-zA-Z0-9._-]{1,249}\Z")


@dataclass
class DescribedPartition:
    partition: int
    leader: int | None
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    line: int


@dataclass
class DescribedTopic:
    name: str
    partition_count: int
    replication: int
    configs: dict[str, str]
    line: int
    topic_id: str | None = None
    partitions: dict[int, DescribedPartition] = field(default_factory=dict)

    @property
    def min_insync(self) -> int | None:
        value = self.configs.get("min.insync.replicas")
        return int(value) if value is not None and value.isdigit() else None


def parse_describe(text: str, source: str = "describe") -> list[DescribedTopic]:
    """Every topic of the text, in file order; raises ImportFormatError at the first bad line."""
    topics: dict[str, DescribedTopic] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        fields = _fields(raw, source, number)
        if "Partition" in fields:
            _partition(fields, topics, source, number, raw)
        elif "PartitionCount" in fields:
            topic = _topic(fields, source, number, raw)
            if topic.name in topics:
                raise ImportFormatError(source, number, f"topic {topic.name} described once", raw)
            topics[topic.name] = topic
        else:
            raise ImportFormatError(source, number, "a topic line (Topic: ... PartitionCount: "
                                    "...) or a partition line (Topic: ... Partition: ...)", raw)
    if not topics:
        raise ImportFormatError(source, 1, "at least one topic line (Topic: T  PartitionCount: N"
                                "  ReplicationFactor: R  Configs: ...)")
    for topic in topics.values():
        _complete(topic, source)
    return list(topics.values())


def _fields(raw: str, source: str, number: int) -> dict[str, str]:
    fields: dict[str, str] = {}
    for cell in raw.strip().split("\t"):
        cell = cell.strip()
        if not cell:
            continue
        name, colon, value = cell.partition(":")
        if not colon:
            raise ImportFormatError(source, number, "tab-separated 'Name: value' fields", raw)
        fields[name.strip()] = value.strip()
    return fields


def _topic(fields: dict[str, str], source: str, number: int, raw: str) -> DescribedTopic:
    name = _name(fields, source, number, raw)
    configs: dict[str, str] = {}
    last = None
    for pair in filter(None, fields.get("Configs", "").split(",")):
        key, eq, value = pair.partition("=")
        if not eq:
            # A list value holds commas too (a throttled-replicas list: 0:1,0:2): a piece
            # without '=' continues the previous value.
            if last is None:
                raise ImportFormatError(source, number, "Configs as key=value,...", raw)
            configs[last] += "," + pair.strip()
            continue
        last = key.strip()
        configs[last] = value.strip()
    topic = DescribedTopic(name, _int(fields, "PartitionCount", source, number, raw),
                           _int(fields, "ReplicationFactor", source, number, raw), configs,
                           number, fields.get("TopicId"))
    if "min.insync.replicas" in configs and topic.min_insync is None:
        raise ImportFormatError(source, number, "min.insync.replicas as a whole number", raw)
    return topic


def _partition(fields: dict[str, str], topics: dict[str, DescribedTopic], source: str,
               number: int, raw: str) -> None:
    name = _name(fields, source, number, raw)
    topic = topics.get(name)
    if topic is None:
        raise ImportFormatError(source, number, f"the topic line of {name} before its "
                                "partitions", raw)
    pid = _int(fields, "Partition", source, number, raw)
    if pid in topic.partitions:
        raise ImportFormatError(source, number, f"partition {name}-{pid} described once", raw)
    leader_text = fields.get("Leader")
    if leader_text is None:
        raise ImportFormatError(source, number, "a Leader: field (a broker id or none)", raw)
    if leader_text in ("none", "-1"):
        leader = None
    elif leader_text.isdigit():
        leader = int(leader_text)
    else:
        raise ImportFormatError(source, number, "Leader: a broker id or none", raw)
    replicas = _ids(fields, "Replicas", source, number, raw)
    if not replicas or len(set(replicas)) != len(replicas):
        raise ImportFormatError(source, number, "Replicas: distinct broker ids", raw)
    isr = _ids(fields, "Isr", source, number, raw)
    topic.partitions[pid] = DescribedPartition(pid, leader, replicas, isr, number)


def _complete(topic: DescribedTopic, source: str) -> None:
    missing = [p for p in range(topic.partition_count) if p not in topic.partitions]
    if missing:
        raise ImportFormatError(source, topic.line, f"{topic.partition_count} partition lines "
                                f"for topic {topic.name} (partition {missing[0]} is missing)")
    extra = [p for p in topic.partitions if p >= topic.partition_count]
    if extra:
        line = topic.partitions[extra[0]].line
        raise ImportFormatError(source, line, f"partition ids below PartitionCount "
                                f"{topic.partition_count} for topic {topic.name}")


def _name(fields: dict[str, str], source: str, number: int, raw: str) -> str:
    name = fields.get("Topic", "")
    if not _TOPIC.match(name):
        raise ImportFormatError(source, number, "Topic: a Kafka topic name (1-249 letters, "
                                "digits, '.', '_' or '-')", raw)
    return name


def _int(fields: dict[str, str], key: str, source: str, number: int, raw: str) -> int:
    value = fields.get(key, "")
    if not value.isdigit():
        raise ImportFormatError(source, number, f"{key}: a whole number", raw)
    return int(value)


def _ids(fields: dict[str, str], key: str, source: str, number: int,
         raw: str) -> tuple[int, ...]:
    if key not in fields:
        raise ImportFormatError(source, number, f"a {key}: field (comma-separated broker ids)",
                                raw)
    parts = [p.strip() for p in fields[key].split(",") if p.strip()]
    if not all(p.isdigit() for p in parts):
        raise ImportFormatError(source, number, f"{key}: comma-separated broker ids", raw)
    return tuple(map(int, parts))
