"""``store status|adopt-redis|reidentify|recount|repair``: which Redis holds this database's
hot state; ``recount`` counts every partition row again for the pages' maintained counts;
``repair`` lists (and with ``--yes`` rebuilds) sets whose records and status disagree.

``status`` prints both identities (the database's record of its Redis, and the
Redis reached); ``adopt-redis`` makes the Redis reached this store's, logging
once what it replaced; ``reidentify`` gives a copied database its own store id.
"""
from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError

from cluster.adapters.redis_keys import reachable
from cluster.engine.store_identity import identity_status
from cluster.management.commands._cli import NO_REDIS, REFUSED, SubcommandCommand
from cluster.services.store import store_adopt_redis, store_recount, store_reidentify


class Command(SubcommandCommand):
    help = "Show or choose which Redis holds this store's hot state."
    redis_actions = frozenset({"adopt-redis", "reidentify", "repair"})
    checks_identity = False  # these commands are how a refused identity is settled

    def add_actions(self, actions: Any) -> None:
        status = actions.add_parser("status", help="the store's and the Redis's identities")
        status.add_argument("--json", action="store_true")
        adopt = actions.add_parser(
            "adopt-redis", help="make the Redis reached hold this store's hot state "
                                "(what it lacks is reported as lost, once)")
        adopt.add_argument("--take-over", action="store_true",
                           help="also when another database owns the namespace (this "
                                "database was moved, and the other is gone)")
        adopt.add_argument("--json", action="store_true")
        again = actions.add_parser("reidentify",
                                   help="give a copied database its own store id and namespace")
        again.add_argument("--force", action="store_true",
                           help="also when no other database owns the namespace")
        again.add_argument("--json", action="store_true")
        recount = actions.add_parser(
            "recount", help="count every partition row again (the counts pages read)")
        recount.add_argument("--json", action="store_true")
        repair = actions.add_parser(
            "repair", help="list the partitions whose records and status disagree (exit 1 if "
                           "any); --yes rebuilds them from the store, reporting what is lost")
        repair.add_argument("--dry-run", action="store_true",
                            help="only list them and what a repair would lose (the default)")
        repair.add_argument("--yes", action="store_true", help="repair them")
        repair.add_argument("--json", action="store_true")

    def check_input(self, **options: Any) -> None:
        if options["action"] == "repair" and options["yes"] and options["dry_run"]:
            self.fail("store repair: --yes repairs, --dry-run only lists: give one of them")

    def handle_status(self, json: bool, **_: Any) -> None:
        unreachable = reachable()
        if unreachable:
            raise CommandError(unreachable, returncode=NO_REDIS)
        status = identity_status()
        recorded, reached = status["recorded_redis"], status["reached_redis"]
        owner = reached["owner"] or {}
        lines = [f"store:          {status['store_id']}",
                 f"database:       {status['database']['identity']}",
                 f"recorded Redis: {recorded['url'] or '-'} (marker {recorded['marker'] or '-'})",
                 f"reached Redis:  {reached['url']} (marker {owner.get('marker', '-')}, "
                 f"owner {owner.get('database', '-')})",
                 f"verdict:        {status['verdict']}"]
        lines += [status["reason"]] if status["reason"] else []
        self.emit(status, json, "\n".join(lines))

    def handle_adopt_redis(self, take_over: bool, json: bool, **_: Any) -> None:
        change = store_adopt_redis(take_over=take_over, by="cli")
        self.emit(change.as_json(), json, change.message)

    def handle_reidentify(self, force: bool, json: bool, **_: Any) -> None:
        change = store_reidentify(force=force, by="cli")
        self.emit(change.as_json(), json, change.message)

    def handle_recount(self, json: bool, **_: Any) -> None:
        counts = store_recount(by="cli")
        self.emit(counts, json, f"counted {counts['partitions']:,} partitions again "
                                f"({counts['count_rows']:,} count rows)")

    def handle_repair(self, yes: bool, json: bool, **_: Any) -> None:
        # Here, not at the top: it loads the engine, which `store status` never needs.
        from cluster.services.repair import store_repair, store_repair_list

        if yes:
            done = store_repair()
            self.emit(done.as_json(), json, done.message)
            return
        found = store_repair_list()
        lines = [f"{d.topic}/{d.partition}: status {d.status_records} ids ending "
                 f"{d.status_last_id}, records key {d.records_found}; HW {d.hw} (store "
                 f"{d.store_hw}): restore at {d.restored_hw}, lose {d.lost_committed} "
                 f"committed, {d.lost_uncommitted} uncommitted" for d in found.partitions]
        self.emit(found.as_json(), json, "\n".join(lines) if lines else found.message)
        if found.partitions:  # a check a script can act on: something is refused until repaired
            raise CommandError(found.message, returncode=REFUSED)
