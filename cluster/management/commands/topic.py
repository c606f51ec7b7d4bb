"""``topic create|list|describe|delete``: like ``fluvio topic``."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from cluster.core.manual_assignment import InvalidReplicaMap, decode_assignment_file
from cluster.errors import NotFound
from cluster.management.commands._cli import SubcommandCommand, table
from cluster.models import Topic
from cluster.selectors.shapes import topic_describe
from cluster.perf import gc_paused

# The services (and the engine they load) are imported by the handlers that call them:
# `topic list` reads rows only and starts without them (composition/startup.py).


class Command(SubcommandCommand):
    help = "Create, list, describe and delete topics."

    def add_actions(self, actions: Any) -> None:
        create = actions.add_parser("create", help="create a topic")
        create.add_argument("name")
        create.add_argument("--partitions", "-p", type=int, default=None)
        create.add_argument("--replication", "-r", type=int, default=None)
        create.add_argument("--ignore-rack-assignment", "-i", action="store_true")
        create.add_argument("--replica-assignment", "-f", type=Path, default=None,
                            metavar="FILE")
        create.add_argument("--min-lrs", type=int, default=1)
        create.add_argument("--max-lag", type=int, default=1000)
        create.add_argument("--unclean-leader-election", action="store_true",
                            help="when the last LRS member is gone, let another live replica "
                                 "lead (its missing committed records are lost)")
        create.add_argument("--dry-run", action="store_true",
                            help="compute and print; store nothing (validate-only for a file)")
        create.add_argument("--json", action="store_true")
        listing = actions.add_parser("list", help="list topics")
        listing.add_argument("--json", action="store_true")
        describe = actions.add_parser("describe", help="show one topic")
        describe.add_argument("name")
        describe.add_argument("--json", action="store_true")
        delete = actions.add_parser("delete", help="delete a topic")
        delete.add_argument("name")

    def handle_create(self, name: str, partitions: int | None, replication: int | None,
                      ignore_rack_assignment: bool, replica_assignment: Path | None,
                      min_lrs: int, max_lag: int, dry_run: bool, json: bool,
                      unclean_leader_election: bool = False, **_: Any) -> None:
        from cluster.services import topic_create

        assignment = self._read_file(replica_assignment) if replica_assignment else None
        if partitions is None and replication is None and assignment is None:
            self.fail("give --partitions and --replication, or --replica-assignment FILE")
        # 100,000 partitions are 200,000 small containers: built with the cyclic GC paused.
        with gc_paused():
            outcome = topic_create(name=name, partitions=partitions, replication=replication,
                                   ignore_racks=ignore_rack_assignment,
                                   replica_assignment=assignment, min_lrs=min_lrs,
                                   max_lag=max_lag,
                                   unclean_leader_election=unclean_leader_election,
                                   dry_run=dry_run, by="cli")
            if json:
                self.emit(outcome.as_json_with_warning(), True, "")
                return
        verb = "would be" if dry_run else "is"
        text = [f"topic \"{name}\" {verb} {outcome.resolution}"
                + (f": {outcome.reason}" if outcome.reason else "")]
        text += [f"warning: {outcome.warning}"] if outcome.warning else []
        text += _map_lines(outcome.replica_map)
        self.stdout.write("\n".join(text))

    def _read_file(self, path: Path) -> object:
        try:
            return decode_assignment_file(path.read_bytes())
        except OSError as exc:
            self.fail(f"cannot read {path}: {exc.strerror}")
        except InvalidReplicaMap as exc:
            self.fail(f"invalid replica assignment: {exc}")

    def handle_list(self, json: bool, **_: Any) -> None:
        topics = [topic_describe(t) for t in Topic.objects.all()]
        rows = [[t["name"], t["resolution"], t["partition_count"], t["replication"],
                 t["reason"]] for t in topics]
        self.emit(topics, json, table(rows, ["NAME", "STATUS", "PARTITIONS",
                                             "REPLICATION", "REASON"]))

    def handle_describe(self, name: str, json: bool, **_: Any) -> None:
        topic = Topic.objects.filter(name=name).first()
        if topic is None:
            raise NotFound(f"topic {name!r} not found")
        data = topic_describe(topic)
        text = [f"Name: {topic.name}", f"Resolution: {topic.resolution}",
                f"Reason: {topic.reason or '-'}",
                f"Partitions: {topic.partitions}  Replication: {topic.replication_factor}"
                f"  Ignore racks: {topic.ignore_rack_assignment}"
                f"  Unclean leader election: {topic.unclean_leader_election}"]
        self.emit(data, json, "\n".join(text + _map_lines(topic.replica_map)))

    def handle_delete(self, name: str, **_: Any) -> None:
        from cluster.services import topic_delete

        topic_delete(name=name, by="cli")
        self.stdout.write(f"topic \"{name}\" deleted")


def _map_lines(replica_map: list[list[int]]) -> list[str]:
    return [f"  {pid:>5}: {replicas}" for pid, replicas in enumerate(replica_map)]
