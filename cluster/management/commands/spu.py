"""``spu register|unregister|list``: like ``fluvio cluster spu``."""
from __future__ import annotations

from typing import Any

from cluster.management.commands._cli import SubcommandCommand, table
from cluster.models import Spu
from cluster.selectors import spu_describe
from cluster.services import spu_register, spu_unregister


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
