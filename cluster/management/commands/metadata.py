"""`manage.py metadata dump [--from OFFSET] [--json]` and `metadata tail`: the metadata log."""
from __future__ import annotations

import json
import time
from typing import Any

from django.core.management.base import CommandParser

from cluster.management.commands._cli import SubcommandCommand
from cluster.selectors.metadata import MAX_PAGE, metadata_page, parse_offset

TAIL_POLL_S = 0.5


class Command(SubcommandCommand):
    help = "Read the control plane's metadata log (dump, or follow it with tail)."
    redis_actions = frozenset({"dump", "tail"})

    def add_actions(self, actions: Any) -> None:
        dump = actions.add_parser("dump", help="print the log from an offset")
        _common(dump)
        dump.add_argument("--limit", type=int, default=None,
                          help="at most this many entries (default: all)")
        tail = actions.add_parser("tail", help="print new entries as they are written")
        _common(tail)
        tail.add_argument("--for-s", type=float, default=None,
                          help="stop after this many seconds (default: until interrupted)")

    def handle_dump(self, **opts: Any) -> None:
        first = self._first(opts)
        limit = opts["limit"]
        if limit is not None and limit < 1:
            self.fail("--limit must be at least 1")
        entries: list[dict[str, Any]] = []
        while limit is None or len(entries) < limit:
            page = metadata_page(first, MAX_PAGE if limit is None
                                 else min(MAX_PAGE, limit - len(entries)))
            entries += page["entries"]
            if len(page["entries"]) == 0 or page["next"] > page["head"]:
                break
            first = page["next"]
        if opts["json"]:
            self.emit(entries, True, "")
        else:
            self.stdout.write("\n".join(map(_line, entries)) if entries else "(no entries)")

    def handle_tail(self, **opts: Any) -> None:
        first = self._first(opts, default_to_head=True)
        stop = None if opts["for_s"] is None else time.monotonic() + max(0.0, opts["for_s"])
        while stop is None or time.monotonic() < stop:
            page = metadata_page(first, MAX_PAGE)
            for entry in page["entries"]:
                self.stdout.write(json.dumps(entry) if opts["json"] else _line(entry))
            self.stdout.flush()
            first = page["next"]
            if not page["entries"]:
                time.sleep(TAIL_POLL_S)

    def _first(self, opts: dict[str, Any], default_to_head: bool = False) -> int:
        if opts["from"] is None:
            return metadata_page(0, 1)["head"] + 1 if default_to_head else 0
        try:
            return parse_offset(opts["from"], "--from")
        except Exception as exc:  # noqa: BLE001  InvalidInput: one line, exit 2
            self.fail(getattr(exc, "message", str(exc)))
        return 0


def _common(parser: CommandParser) -> None:
    parser.add_argument("--from", dest="from", default=None,
                        help="first offset (dump: 0; tail: the next entry written)")
    parser.add_argument("--json", action="store_true",
                        help="JSON: dump prints a list, tail one object per line")


def _line(entry: dict[str, Any]) -> str:
    at = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.get("at", 0) / 1000))
    rest = {k: v for k, v in entry.items() if k not in ("offset", "type", "at")}
    where = f"{rest.pop('topic')}/{rest.pop('partition')}" if "partition" in rest else ""
    return f"{entry['offset']:>8}  {at}  {entry['type']:<17} {where:<16} {json.dumps(rest)}"
