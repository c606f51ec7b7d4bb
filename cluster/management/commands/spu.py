"""``spu register|unregister|list|offline|online|kill``: like ``fluvio cluster spu``.

``offline`` / ``online`` / ``kill`` return once the elections they caused are
finished (stepped here when no Celery worker runs); ``kill`` also waits for
the connection manager to notice the silent SPU, unless ``--no-wait``.
"""
from __future__ import annotations

from typing import Any

from cluster.management.commands._cli import SubcommandCommand, table
from cluster.models import Spu
from cluster.selectors import spu_describe
from cluster.services import spu_register, spu_unregister
from cluster.services.outages import (OutageResult, settle_outage, spu_kill, spu_offline,
                                      spu_online)


class Command(SubcommandCommand):
    help = "Register, unregister and list SPUs."

    def add_actions(self, actions: Any) -> None:
        register = actions.add_parser("register", help="register a custom SPU")
        register.add_argument("--id", type=int, required=True, dest="spu_id")
        register.add_argument("--rack", default="")
        register.add_argument("--public", default="", help="HOST:PORT")
        register.add_argument("--private", default="", help="HOST:PORT")
        unregister = actions.add_parser("unregister", help="unregister a custom SPU")
        unregister.add_argument("--id", type=int, required=True, dest="spu_id")
        listing = actions.add_parser("list", help="list SPUs")
        listing.add_argument("--json", action="store_true")
        for name, text in (("offline", "take an SPU offline (the SC drops it)"),
                           ("online", "bring an SPU back (restart its loop, reconnect)"),
                           ("kill", "stop an SPU's loop without telling the SC")):
            outage = actions.add_parser(name, help=text)
            outage.add_argument("spu_id", type=int, metavar="ID")
            outage.add_argument("--no-wait", action="store_true",
                                help="return without waiting for the elections")
            outage.add_argument("--json", action="store_true")

    def handle_register(self, spu_id: int, rack: str, public: str, private: str,
                        **_: Any) -> None:
        spu = spu_register(spu_id=spu_id, rack=rack, public=public, private=private,
                           by="cli")
        self.stdout.write(f"SPU {spu.id} registered")

    def handle_unregister(self, spu_id: int, **_: Any) -> None:
        spu_unregister(spu_id=spu_id, by="cli")
        self.stdout.write(f"SPU {spu_id} unregistered")

    def handle_list(self, json: bool, **_: Any) -> None:
        spus = [spu_describe(s) for s in Spu.objects.select_related("group")]
        rows = [[s["id"], s["type"], s["rack"] or "-", s["resolution"], s["public"],
                 s["private"], s["group"] or "-"] for s in spus]
        self.emit(spus, json, table(rows, ["ID", "TYPE", "RACK", "STATUS", "PUBLIC",
                                           "PRIVATE", "GROUP"]))

    def handle_offline(self, spu_id: int, no_wait: bool, json: bool, **_: Any) -> None:
        self._report(settle_outage(spu_offline(spu_id=spu_id, by="cli"), wait=not no_wait), json)

    def handle_online(self, spu_id: int, no_wait: bool, json: bool, **_: Any) -> None:
        self._report(settle_outage(spu_online(spu_id=spu_id, by="cli"), wait=not no_wait), json)

    def handle_kill(self, spu_id: int, no_wait: bool, json: bool, **_: Any) -> None:
        result = spu_kill(spu_id=spu_id, by="cli")
        if not no_wait:
            result = settle_outage(result, killed=True)
        self._report(result, json)

    def _report(self, result: OutageResult, as_json: bool) -> None:
        if result.settled is False:
            self.fail(f"SPU {', '.join(map(str, result.spus))}: elections did not finish in time")
        text = (f"SPU {', '.join(map(str, result.spus))}: {result.resolution}"
                + ("" if result.settled else " (elections still running)"))
        self.emit(result.as_json(), as_json, text)
