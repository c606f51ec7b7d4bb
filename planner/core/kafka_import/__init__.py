"""Read a real cluster from the outputs of Kafka's own tools (pure, standard library).

``parse_describe`` (kafka-topics.sh --describe), ``parse_log_dirs`` (kafka-log-dirs.sh
--describe), ``parse_brokers`` (kafka-broker-api-versions.sh); ``import_texts`` puts them
together into a ``Snapshot``. A file that does not parse raises ``ImportFormatError``
naming the file, the line and what was expected; contradictions become warnings.
"""
from __future__ import annotations

from planner.core.kafka_import.brokers import Broker, parse_brokers
from planner.core.kafka_import.describe import DescribedTopic, parse_describe
from planner.core.kafka_import.errors import ImportFormatError
from planner.core.kafka_import.log_dirs import BrokerDisks, parse_log_dirs
from planner.core.kafka_import.snapshot import Snapshot, assemble


def import_texts(describe: str, log_dirs: str | None = None, brokers: str | None = None, *,
                 names: tuple[str, str, str] = ("describe", "log-dirs", "brokers")) -> Snapshot:
    """The snapshot of the given outputs; ``names`` label errors (the file names)."""
    topics = parse_describe(describe, names[0])
    disks = parse_log_dirs(log_dirs, names[1]) if log_dirs is not None else None
    known = parse_brokers(brokers, names[2]) if brokers is not None else None
    return assemble(topics, disks, known, names[0])


__all__ = ["Broker", "BrokerDisks", "DescribedTopic", "ImportFormatError", "Snapshot",
           "import_texts", "parse_brokers", "parse_describe", "parse_log_dirs"]
