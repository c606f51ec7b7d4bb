"""``cluster import``: a real Kafka cluster from the outputs of Kafka's own tools.

``--kafka-describe`` (kafka-topics.sh --describe) is required; ``--kafka-log-dirs``
(kafka-log-dirs.sh --describe) adds sizes and disk capacities, ``--kafka-brokers``
(kafka-broker-api-versions.sh) racks and endpoints. Without ``--plan-only`` the SPUs and
topics are loaded into the store; with it, only a planning snapshot is kept
(``plan rebalance --snapshot ID``). A file that does not parse exits 2 naming the file,
the line and what was expected, and nothing is stored.

A Fluvio cluster comes from its own list outputs instead: ``--fluvio-partitions`` (``fluvio
partition list -O json``, required for it) and ``--fluvio-spus`` (``fluvio cluster spu list
-O json``: racks, endpoints); see planner/core/kafka_import/fluvio.py.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from cluster.management.commands._cli import SubcommandCommand
from planner.imports import ImportOutcome, import_cluster, import_fluvio_cluster


class Command(SubcommandCommand):
    help = "Import a cluster from Kafka's tool outputs."

    def add_actions(self, actions: Any) -> None:
        imp = actions.add_parser("import", help="load a Kafka cluster's layout, sizes, racks")
        imp.add_argument("--kafka-describe", type=Path, default=None, metavar="FILE",
                         help="output of kafka-topics.sh --describe (all topics); required "
                              "unless --fluvio-partitions")
        imp.add_argument("--kafka-log-dirs", type=Path, default=None, metavar="FILE",
                         help="output of kafka-log-dirs.sh --describe")
        imp.add_argument("--kafka-brokers", type=Path, default=None, metavar="FILE",
                         help="output of kafka-broker-api-versions.sh")
        imp.add_argument("--fluvio-partitions", type=Path, default=None, metavar="FILE",
                         help="output of fluvio partition list -O json (instead of the "
                              "Kafka files)")
        imp.add_argument("--fluvio-spus", type=Path, default=None, metavar="FILE",
                         help="output of fluvio cluster spu list -O json")
        imp.add_argument("--plan-only", action="store_true",
                         help="keep a planning snapshot; leave the store alone")
        imp.add_argument("--json", action="store_true")

    def handle_import(self, **opts: Any) -> None:
        kafka = [f for f in ("kafka_describe", "kafka_log_dirs", "kafka_brokers") if opts[f]]
        fluvio = [f for f in ("fluvio_partitions", "fluvio_spus") if opts[f]]
        if kafka and fluvio:
            self.fail("give Kafka's files or Fluvio's, not both")
        if fluvio:
            outcome = self._import_fluvio(opts)
        else:
            if not opts["kafka_describe"]:
                self.fail("--kafka-describe FILE is required (or --fluvio-partitions FILE)")
            paths = (opts["kafka_describe"], opts["kafka_log_dirs"], opts["kafka_brokers"])
            texts = [self.read_text(p) if p is not None else None for p in paths]
            names = tuple(str(p) if p else "" for p in paths)
            assert texts[0] is not None
            outcome = import_cluster(describe=texts[0], log_dirs=texts[1], brokers=texts[2],
                                     names=(names[0], names[1], names[2]),
                                     plan_only=opts["plan_only"], by="cli")
        for warning in outcome.snapshot.warnings:
            self.stderr.write(f"warning: {warning}")
        self.emit(outcome.as_json(), opts["json"], _summary(outcome))

    def _import_fluvio(self, opts: dict[str, Any]) -> ImportOutcome:
        if not opts["fluvio_partitions"]:
            self.fail("--fluvio-spus needs --fluvio-partitions FILE")
        spus = opts["fluvio_spus"]
        return import_fluvio_cluster(
            partitions=self.read_text(opts["fluvio_partitions"]),
            spus=self.read_text(spus) if spus else None,
            names=(str(opts["fluvio_partitions"]), str(spus or "")),
            plan_only=opts["plan_only"], by="cli")



def _summary(outcome: ImportOutcome) -> str:
    data = outcome.as_json()
    where = "into the store" if data["stored"] else "as a planning snapshot (store untouched)"
    lines = [f"import {data['id']}: {data['brokers']} brokers, {data['topics']} topics, "
             f"{data['partitions']} partitions {where}",
             f"  racks: {', '.join(data['racks']) or '(none)'}; "
             f"sizes: {'yes' if data['sized'] else 'no'}; "
             f"capacities: {len(data['capacities'])} brokers"]
    lines += [f"  topic {k} stored as {v}" for k, v in sorted(data["renamed"].items())[:20]]
    if data["warnings"]:
        lines.append(f"  {len(data['warnings'])} warnings (on stderr)")
    return "\n".join(lines)
