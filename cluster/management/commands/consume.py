"""``consume TOPIC [--partition P] [--offset O] [--uncommitted] [--json]``."""
from __future__ import annotations

from typing import Any

from cluster.management.commands._cli import SubcommandCommand
from cluster.services.records import records_consume
from cluster.services.waiting import wait_replicated


class Command(SubcommandCommand):
    help = "Print a partition's records: committed ones unless --uncommitted."
    redis_actions = frozenset({"consume"})

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("topic")
        parser.add_argument("--partition", type=int, default=0)
        parser.add_argument("--offset", type=int, default=0)
        parser.add_argument("--max", type=int, default=None, dest="max_records")
        parser.add_argument("--uncommitted", action="store_true")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        options["action"] = "consume"
        super().handle(*args, **options)

    def check_input(self, topic: str, **_: Any) -> None:
        self.require_name(topic)

    def handle_consume(self, topic: str, partition: int, offset: int, max_records: int | None,
                       uncommitted: bool, json: bool, **_: Any) -> None:
        wait_replicated(topic)
        records = records_consume(topic=topic, partition=partition, offset=offset,
                                  uncommitted=uncommitted, max_records=max_records)
        text = "\n".join(f"{r['offset']}\t{r['value']}" for r in records)
        self.emit(records, json, text)
