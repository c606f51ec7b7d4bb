"""``partition list``: like ``fluvio partition list``."""
from __future__ import annotations

from typing import Any

from cluster.management.commands._cli import SubcommandCommand, table
from cluster.selectors import partition_rows


class Command(SubcommandCommand):
    help = "List partitions with their leader, replicas, LRS and status."

    def add_actions(self, actions: Any) -> None:
        listing = actions.add_parser("list", help="list partitions")
        listing.add_argument("--topic", default=None)
        listing.add_argument("--json", action="store_true")

    def handle_list(self, topic: str | None, json: bool, **_: Any) -> None:
        rows = partition_rows(topic)
        text_rows = [[r["topic"], r["partition"], r["leader"], r["replicas"], r["lrs"],
                      r["resolution"], r["hw"], r["leo"]] for r in rows]
        self.emit(rows, json, table(text_rows, ["TOPIC", "PARTITION", "LEADER", "REPLICAS",
                                                "LRS", "RESOLUTION", "HW", "LEO"]))
