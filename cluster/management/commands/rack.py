"""``rack offline|online R``: every SPU of a rack at once, then the elections."""
from __future__ import annotations

from typing import Any

from cluster.management.commands._cli import SubcommandCommand
from cluster.services.outages import rack_offline, rack_online, settle_outage


class Command(SubcommandCommand):
    help = "Take every SPU of a rack offline, or bring them back."
    redis_actions = frozenset({"offline", "online"})

    def add_actions(self, actions: Any) -> None:
        for name, text in (("offline", "take every SPU of the rack offline"),
                           ("online", "bring every SPU of the rack back")):
            sub = actions.add_parser(name, help=text)
            sub.add_argument("rack")
            sub.add_argument("--no-wait", action="store_true",
                             help="return without waiting for the elections")
            sub.add_argument("--json", action="store_true")

    def handle_offline(self, rack: str, no_wait: bool, json: bool, **_: Any) -> None:
        self._run(rack_offline, rack, no_wait, json)

    def handle_online(self, rack: str, no_wait: bool, json: bool, **_: Any) -> None:
        self._run(rack_online, rack, no_wait, json)

    def _run(self, service: Any, rack: str, no_wait: bool, as_json: bool) -> None:
        result = settle_outage(service(rack=rack, by="cli"), wait=not no_wait)
        if result.settled is False:
            self.fail(f"rack {rack}: elections did not finish in time")
        self.emit({"rack": rack, **result.as_json()}, as_json,
                  f"rack {rack} (SPU {', '.join(map(str, result.spus))}): {result.resolution}")
