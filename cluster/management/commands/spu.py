"""``spu register|unregister|update|list|offline|online|kill``: like ``fluvio cluster spu``.

Other apps' actions are the engine's (``Engine.command_actions``, built in
composition/bootstrap.py): the planner's ``drain`` (planner/management/spu_drain.py),
so this command names no planner.

``offline`` / ``online`` / ``kill`` return once the elections they caused are
finished (stepped here when no Celery worker runs); ``kill`` also waits for
the connection manager to notice the silent SPU, unless ``--no-wait``.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cluster.management.commands._cli import SubcommandCommand, table
from cluster.models import Spu
from cluster.selectors.shapes import spu_describe

if TYPE_CHECKING:
    from cluster.services.outages import OutageResult

# The services (and the engine they load) are imported by the handlers that call them:
# `spu list` reads rows only and starts without them (composition/startup.py).


def _engine_actions() -> tuple[Any, ...]:
    """The other apps' `spu` actions (``Engine.command_actions``); none for a row-only
    start, which builds no engine (composition/startup.py)."""
    from composition.startup import store_only_command

    if store_only_command():
        return ()
    from cluster.engine.engine import current

    return tuple(current().actions_of("spu"))


class Command(SubcommandCommand):
    help = "Register, unregister and list SPUs."
    redis_actions = frozenset({"offline", "online", "kill"})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for action in _engine_actions():
            setattr(self, f"handle_{action.name}",
                    lambda _action=action, **options: _action.handle(self, **options))

    def add_actions(self, actions: Any) -> None:
        register = actions.add_parser("register", help="register a custom SPU")
        register.add_argument("--id", type=int, required=True, dest="spu_id")
        register.add_argument("--rack", default="")
        register.add_argument("--public", default="", help="HOST:PORT")
        register.add_argument("--private", default="", help="HOST:PORT")
        unregister = actions.add_parser(
            "unregister", help="unregister a custom SPU (refused while it holds replicas)")
        _spu_id_argument(unregister)
        unregister.add_argument("--force", action="store_true",
                                help="unregister even though it holds replicas")
        update = actions.add_parser("update", help="change an SPU's rack or endpoints (003)")
        _spu_id_argument(update)
        update.add_argument("--rack", default=None, help="a rack name, or '' for none")
        update.add_argument("--public", default=None, help="HOST:PORT")
        update.add_argument("--private", default=None, help="HOST:PORT")
        update.add_argument("--json", action="store_true")
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
        for action in _engine_actions():
            action.add_parser(actions)

    def handle_register(self, spu_id: int, rack: str, public: str, private: str,
                        **_: Any) -> None:
        from cluster.services import spu_register

        spu = spu_register(spu_id=spu_id, rack=rack, public=public, private=private,
                           by="cli")
        self.stdout.write(f"SPU {spu.id} registered")

    def handle_unregister(self, force: bool, **options: Any) -> None:
        from cluster.services import spu_unregister

        spu_id = self.spu_id(options)
        spu_unregister(spu_id=spu_id, force=force, by="cli")
        self.stdout.write(f"SPU {spu_id} unregistered")

    def handle_update(self, rack: str | None, public: str | None, private: str | None,
                      json: bool, **options: Any) -> None:
        from cluster.services import spu_update

        spu = spu_update(spu_id=self.spu_id(options), rack=rack, public=public,
                         private=private, by="cli")
        self.emit(spu_describe(spu), json, f"SPU {spu.id}: rack {spu.rack or '(none)'}, "
                                           f"public {spu.public_endpoint}, "
                                           f"private {spu.private_endpoint}")

    def spu_id(self, options: dict[str, Any]) -> int:
        """``spu unregister 3`` and ``spu unregister --id 3`` both work (fluvio uses --id)."""
        given = {v for v in (options.get("spu_id"), options.get("spu_id_pos")) if v is not None}
        if len(given) != 1:
            self.fail("give the SPU id once: spu ACTION ID (or --id ID)")
        return given.pop()

    def handle_list(self, json: bool, **_: Any) -> None:
        spus = [spu_describe(s) for s in Spu.objects.select_related("group")]
        rows = [[s["id"], s["type"], s["rack"] or "-", s["resolution"], s["public"],
                 s["private"], s["group"] or "-"] for s in spus]
        self.emit(spus, json, table(rows, ["ID", "TYPE", "RACK", "STATUS", "PUBLIC",
                                           "PRIVATE", "GROUP"]))

    def handle_offline(self, spu_id: int, no_wait: bool, json: bool, **_: Any) -> None:
        from cluster.services.outages import settle_outage, spu_offline

        self._report(settle_outage(spu_offline(spu_id=spu_id, by="cli"), wait=not no_wait), json)

    def handle_online(self, spu_id: int, no_wait: bool, json: bool, **_: Any) -> None:
        from cluster.services.outages import settle_outage, spu_online

        self._report(settle_outage(spu_online(spu_id=spu_id, by="cli"), wait=not no_wait), json)

    def handle_kill(self, spu_id: int, no_wait: bool, json: bool, **_: Any) -> None:
        from cluster.services.outages import settle_outage, spu_kill

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


def _spu_id_argument(parser: Any) -> None:
    parser.add_argument("spu_id_pos", nargs="?", type=int, metavar="ID")
    parser.add_argument("--id", type=int, dest="spu_id")
