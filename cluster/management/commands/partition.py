"""``partition list``: like ``fluvio partition list``.

Rows come from the replication's hot state (leader LEO and each replica's
LEO / HW), falling back to the store for partitions not replicated yet.
"""
from __future__ import annotations

from typing import Any

from cluster.management.commands._cli import SubcommandCommand, table
from cluster.services.records import replication_partition_list


class Command(SubcommandCommand):
    help = "List partitions with their leader, replicas, LRS and status."
    redis_actions = frozenset({"list"})

    def add_actions(self, actions: Any) -> None:
        listing = actions.add_parser("list", help="list partitions")
        listing.add_argument("--topic", default=None)
        listing.add_argument("--json", action="store_true")

    def check_input(self, topic: str | None = None, **_: Any) -> None:
        if topic is not None:
            self.require_name(topic)

    def handle_list(self, topic: str | None, json: bool, **_: Any) -> None:
        rows = replication_partition_list(topic)
        text_rows = [[r["topic"], r["partition"], r["leader"], r["replicas"], r["lrs"],
                      _status_cell(r), r["hw"], r["leo"], _replica_cells(r)] for r in rows]
        self.emit(rows, json, table(text_rows, ["TOPIC", "PARTITION", "LEADER", "REPLICAS",
                                                "LRS", "RESOLUTION", "HW", "LEO",
                                                "REPLICAS LEO/HW"]))


def _replica_cells(row: dict[str, Any]) -> str:
    return " ".join(f"{r['spu']}:{r['leo']}/{r['hw']}" for r in row["replica_status"])


def _status_cell(row: dict[str, Any]) -> str:
    waiting = row.get("waiting_for")
    return f"{row['resolution']} (waits for SPU {', '.join(map(str, waiting))})" if waiting \
        else row["resolution"]
