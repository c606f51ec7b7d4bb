"""``produce TOPIC [--partition P] (--count N | --value V...) [--acks 0|1|all]``.

Exits 0 once the write is acknowledged as its acks ask (acks=all: committed
by the LRS), 1 with the reason when it is refused or fails, 2 on bad input.
"""
from __future__ import annotations

import math
from typing import Any

from django.core.management.base import CommandError

from cluster.management.commands._cli import SubcommandCommand
from cluster.services.records import records_produce_and_wait

REFUSED = 1
# An hour: longer than any wait the engine needs, short enough to be a wait and not a hang.
MAX_WAIT_S = 3600.0


class Command(SubcommandCommand):
    help = "Append records to a partition (generated values record-<offset> with --count)."
    redis_actions = frozenset({"produce"})

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("topic")
        parser.add_argument("--partition", type=int, default=0)
        what = parser.add_mutually_exclusive_group(required=True)
        what.add_argument("--count", type=int, help="append N generated records")
        what.add_argument("--value", action="append", dest="values",
                          help="a record value (repeat for several)")
        parser.add_argument("--acks", default="1", choices=["0", "1", "all", "-1"])
        parser.add_argument("--wait-s", type=float, default=None, dest="wait_s",
                            help="how long acks=all waits for the LRS (default PRODUCE_WAIT_S)")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        options["action"] = "produce"
        super().handle(*args, **options)

    def check_input(self, topic: str, wait_s: float | None, **_: Any) -> None:
        self.require_name(topic)
        if wait_s is not None and not (math.isfinite(wait_s) and 0 <= wait_s <= MAX_WAIT_S):
            self.fail(f"--wait-s must be from 0 to {MAX_WAIT_S:g} seconds, not {wait_s:g}")

    def handle_produce(self, topic: str, partition: int, count: int | None,
                       values: list[str] | None, acks: str, wait_s: float | None, json: bool,
                       **_: Any) -> None:
        outcome = records_produce_and_wait(topic=topic, partition=partition, acks=acks,
                                           count=count, values=values, wait_s=wait_s)
        if not outcome.ok:
            raise CommandError(f"{topic}/{partition}: write {outcome.state}: "
                               f"{outcome.reason} ({outcome.code})", returncode=REFUSED)
        self.emit(outcome.as_json(), json,
                  f"{outcome.count} record(s) at offset {outcome.base_offset} of "
                  f"{topic}/{partition}: {outcome.state} (acks={outcome.acks})")
