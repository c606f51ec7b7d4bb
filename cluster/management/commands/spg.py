"""``spg create|scale|delete|list``: like ``fluvio cluster spg``."""
from __future__ import annotations

from typing import Any

from cluster.management.commands._cli import SubcommandCommand, table
from cluster.models import SpuGroup
from cluster.selectors.shapes import group_describe

# The services (and the engine they load) are imported by the handlers that call them:
# `spg list` reads rows only and starts without them (composition/startup.py).


class Command(SubcommandCommand):
    help = "Create, scale, delete and list SPU groups (managed SPUs)."

    def add_actions(self, actions: Any) -> None:
        create = actions.add_parser("create", help="create an SPU group")
        create.add_argument("name")
        create.add_argument("--replicas", type=int, required=True)
        create.add_argument("--min-id", type=int, default=None)
        create.add_argument("--rack", default="")
        create.add_argument("--storage-size", default="1Gi")
        create.add_argument("--json", action="store_true")
        scale = actions.add_parser("scale", help="change the number of SPUs")
        scale.add_argument("name")
        scale.add_argument("--replicas", type=int, required=True)
        scale.add_argument("--force", action="store_true",
                           help="scale down even though the SPUs it ends hold replicas")
        delete = actions.add_parser("delete", help="delete a group and its SPUs")
        delete.add_argument("name")
        listing = actions.add_parser("list", help="list SPU groups")
        listing.add_argument("--json", action="store_true")

    def handle_create(self, name: str, replicas: int, min_id: int | None, rack: str,
                      storage_size: str, json: bool, **_: Any) -> None:
        from cluster.services import spg_create

        group = spg_create(name=name, replicas=replicas, min_id=min_id, rack=rack,
                           storage_size=storage_size, by="cli")
        text = f"SPU group {group.name} {group.resolution}"
        self.emit(group_describe(group), json,
                  text + (f": {group.reason}" if group.reason else ""))

    def handle_scale(self, name: str, replicas: int, force: bool, **_: Any) -> None:
        from cluster.services import spg_scale

        group = spg_scale(name=name, replicas=replicas, force=force, by="cli")
        self.stdout.write(f"SPU group {group.name} scaled to {group.replicas}")

    def handle_delete(self, name: str, **_: Any) -> None:
        from cluster.services import spg_delete

        spg_delete(name=name, by="cli")
        self.stdout.write(f"SPU group {name} deleted")

    def handle_list(self, json: bool, **_: Any) -> None:
        groups = [group_describe(g) for g in SpuGroup.objects.all()]
        rows = [[g["name"], g["replicas"], g["min_id"], g["rack"] or "-",
                 g["storage_size"], g["resolution"], g["reason"]] for g in groups]
        self.emit(groups, json, table(rows, ["NAME", "REPLICAS", "MIN ID", "RACK",
                                             "SIZE", "STATUS", "REASON"]))
