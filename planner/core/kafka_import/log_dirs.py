"""``kafka-log-dirs.sh --describe`` output: two text lines, then one JSON document.

Confirmed against Apache Kafka's LogDirsCommand (tools/.../LogDirsCommand.java): it prints
``Querying brokers for log directories information``, ``Received log directory
information from brokers 0,1,2``, then ``{"version":1,"brokers":[{"broker":B,"logDirs":
[{"logDir":D,"error":E|null,"partitions":[{"partition":"T-P","size":S,"offsetLag":O,
"isFuture":F}]}]}]}``. Newer versions add ``totalBytes`` / ``usableBytes`` per log dir.
A future replica (``isFuture``: a move between a broker's own dirs) is not counted twice.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from planner.core.kafka_import.errors import ImportFormatError


@dataclass
class BrokerDisks:
    broker: int
    # (topic, partition) -> bytes on this broker (the largest where two dirs hold it).
    sizes: dict[tuple[str, int], int] = field(default_factory=dict)
    # Sum of totalBytes over the dirs that report it; None where none does.
    total_bytes: int | None = None
    usable_bytes: int | None = None
    errors: list[str] = field(default_factory=list)


def parse_log_dirs(text: str, source: str = "log-dirs") -> dict[int, BrokerDisks]:
    """Broker id -> its replicas' sizes and disk capacity."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("{")), None)
    if start is None:
        raise ImportFormatError(source, max(1, len(lines)), "a JSON document "
                                '({"version":1,"brokers":[...]}) after the two text lines')
    body = "\n".join(lines[start:])
    try:
        data = json.loads(body)
    except json.JSONDecodeError as error:
        raise ImportFormatError(source, start + error.lineno,
                                f"JSON ({error.msg} at column {error.colno})") from None
    except RecursionError:
        raise ImportFormatError(source, start + 1, "JSON nested at most a few levels") from None
    line = start + 1
    if not isinstance(data, dict) or data.get("version") != 1:
        raise ImportFormatError(source, line, '{"version":1,...}')
    brokers = data.get("brokers")
    if not isinstance(brokers, list):
        raise ImportFormatError(source, line, '"brokers": a list')
    out: dict[int, BrokerDisks] = {}
    for index, entry in enumerate(brokers):
        disks = _broker(entry, f"brokers[{index}]", source, line)
        if disks.broker in out:
            raise ImportFormatError(source, line, f"broker {disks.broker} listed once")
        out[disks.broker] = disks
    return out


def _broker(entry: Any, where: str, source: str, line: int) -> BrokerDisks:
    if not isinstance(entry, dict) or not _count(entry.get("broker")):
        raise ImportFormatError(source, line, f'{where}: {{"broker": id, "logDirs": [...]}}')
    dirs = entry.get("logDirs")
    if not isinstance(dirs, list):
        raise ImportFormatError(source, line, f'{where}.logDirs: a list')
    disks = BrokerDisks(entry["broker"])
    for d, log_dir in enumerate(dirs):
        _log_dir(disks, log_dir, f"{where}.logDirs[{d}]", source, line)
    return disks


def _log_dir(disks: BrokerDisks, log_dir: Any, where: str, source: str, line: int) -> None:
    if not isinstance(log_dir, dict) or not isinstance(log_dir.get("partitions", []), list):
        raise ImportFormatError(source, line, f'{where}: {{"logDir": ..., "partitions": [...]}}')
    if log_dir.get("error"):
        disks.errors.append(f"{log_dir.get('logDir')}: {log_dir['error']}")
    for key, attr in (("totalBytes", "total_bytes"), ("usableBytes", "usable_bytes")):
        value = log_dir.get(key)
        if value is None:
            continue
        if not _count(value):
            raise ImportFormatError(source, line, f"{where}.{key}: a non-negative integer")
        setattr(disks, attr, (getattr(disks, attr) or 0) + value)
    for p, row in enumerate(log_dir.get("partitions", [])):
        here = f"{where}.partitions[{p}]"
        if not isinstance(row, dict) or not isinstance(row.get("partition"), str):
            raise ImportFormatError(source, line, f'{here}: {{"partition": "topic-N", "size": '
                                    'bytes, ...}')
        topic, dash, pid = row["partition"].rpartition("-")
        if not dash or not topic or not pid.isdigit():
            raise ImportFormatError(source, line, f'{here}.partition: "topic-N"',
                                    row["partition"])
        if not _count(row.get("size")):
            raise ImportFormatError(source, line, f"{here}.size: a non-negative integer")
        at = (topic, int(pid))
        disks.sizes[at] = max(disks.sizes.get(at, 0), row["size"])


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
