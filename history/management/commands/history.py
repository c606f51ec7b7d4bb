"""`manage.py history at --time ISO|--offset N [--topic T] [--json]`, `history diff --from X
--to Y [--json]`, `history snapshot`, `history bounds`: the cluster as it was."""
from __future__ import annotations

from typing import Any

from cluster.errors import InvalidInput
from cluster.management.commands._cli import SubcommandCommand, table
from history.selectors import (Point, history_at, history_bounds, history_diff, parse_point)
from history.services import snapshot_take


class Command(SubcommandCommand):
    help = "Replay the metadata log: partitions at a moment, or what changed between two."
    redis_actions = frozenset({"at", "diff", "snapshot", "bounds"})

    def add_actions(self, actions: Any) -> None:
        at = actions.add_parser("at", help="partitions as `partition list` showed them then")
        when = at.add_mutually_exclusive_group(required=True)
        when.add_argument("--time", default=None, help="ISO 8601 time (UTC unless given)")
        when.add_argument("--offset", default=None, help="metadata-log offset")
        at.add_argument("--topic", default=None)
        at.add_argument("--json", action="store_true")
        diff = actions.add_parser("diff", help="partitions whose leader, LRS or replicas moved")
        diff.add_argument("--from", dest="start", required=True, help="offset or ISO time")
        diff.add_argument("--to", dest="end", required=True, help="offset or ISO time")
        diff.add_argument("--json", action="store_true")
        snap = actions.add_parser("snapshot", help="take a snapshot now")
        snap.add_argument("--json", action="store_true")
        bounds = actions.add_parser("bounds", help="where history begins and ends")
        bounds.add_argument("--json", action="store_true")

    def check_input(self, action: str = "", topic: str | None = None, **opts: Any) -> None:
        if topic is not None:
            self.require_name(topic)
        try:
            if action == "at":
                self._point(opts)
            elif action == "diff":
                parse_point(opts["start"], "--from")
                parse_point(opts["end"], "--to")
        except InvalidInput as exc:
            self.fail(exc.message)

    def _point(self, opts: dict[str, Any]) -> Point:
        if opts.get("offset") is not None:
            point = parse_point(opts["offset"], "--offset")
            if point.offset is None:
                self.fail("--offset must be a whole number of at least 0")
            return point
        point = parse_point(opts["time"], "--time")
        if point.at_ms is None:
            self.fail("--time must be an ISO 8601 time, e.g. 2026-11-25T04:40:00Z")
        return point

    def handle_at(self, topic: str | None, json: bool, **opts: Any) -> None:
        rows = history_at(self._point(opts), topic)
        self.emit(rows, json, table(
            [[r["topic"], r["partition"], r["leader"], r["replicas"], r["lrs"],
              r["resolution"], r["hw"], r["leo"]] for r in rows],
            ["TOPIC", "PARTITION", "LEADER", "REPLICAS", "LRS", "RESOLUTION", "HW", "LEO"]))

    def handle_diff(self, start: str, end: str, json: bool, **_: Any) -> None:
        report = history_diff(parse_point(start, "--from"), parse_point(end, "--to"))
        rows = [[r["topic"], r["partition"], ",".join(r["changed"]), r["leader"]["from"],
                 r["leader"]["to"], r["lrs"]["from"], r["lrs"]["to"]]
                for r in report["partitions"]]
        self.emit(report, json, table(rows, ["TOPIC", "PARTITION", "CHANGED", "LEADER FROM",
                                             "LEADER TO", "LRS FROM", "LRS TO"]))

    def handle_snapshot(self, json: bool, **_: Any) -> None:
        snap = snapshot_take()
        data = {"offset": snap.offset if snap else None,
                "taken": snap is not None, "partitions": snap.partitions if snap else None}
        self.emit(data, json, f"snapshot at offset {snap.offset}" if snap
                  else "no new entries since the newest snapshot")

    def handle_bounds(self, json: bool, **_: Any) -> None:
        b = history_bounds()
        begins = b["begins"]
        text = (f"history begins at offset {begins['offset']}"
                + (f" ({begins['time']})" if begins["time"] else "")
                if begins["offset"] is not None else
                "history begins at its first snapshot, and none is taken yet")
        self.emit(b, json, f"{text}; the log's head is {b['head']['offset']}")
