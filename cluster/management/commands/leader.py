"""``leader elect --preferred [--topic T]`` / ``--unclean --topic T --partition P [--spu N]``.

Kafka's ``kafka-leader-election --election-type PREFERRED|UNCLEAN``: the first
moves leadership back to each partition's first replica where that SPU is live
and in the LRS; the second lets a live replica outside the LRS lead one Offline
partition and says how many committed offsets that gave up.
"""
from __future__ import annotations

from typing import Any

from cluster.management.commands._cli import SubcommandCommand, table
from cluster.services.leaders import (PreferredReport, leader_elect_preferred,
                                      leader_elect_unclean)


class Command(SubcommandCommand):
    help = "Elect partition leaders: preferred (all or one topic) or unclean (one partition)."

    def add_actions(self, actions: Any) -> None:
        elect = actions.add_parser("elect", help="run a leader election")
        kind = elect.add_mutually_exclusive_group(required=True)
        kind.add_argument("--preferred", action="store_true",
                          help="move leadership back to each partition's first replica")
        kind.add_argument("--unclean", action="store_true",
                          help="let a live replica outside the LRS lead (loses records)")
        elect.add_argument("--topic", default=None)
        elect.add_argument("--partition", type=int, default=None)
        elect.add_argument("--spu", type=int, default=None,
                           help="with --unclean: the replica that leads (default: the longest log)")
        elect.add_argument("--json", action="store_true")

    def handle_elect(self, preferred: bool, unclean: bool, topic: str | None,
                     partition: int | None, spu: int | None, json: bool, **_: Any) -> None:
        if preferred:
            if partition is not None or spu is not None:
                self.fail("--partition and --spu go with --unclean only")
            report = leader_elect_preferred(topic=topic, by="cli")
            self.emit(report.as_json(), json, _preferred_text(report))
            return
        if topic is None or partition is None:
            self.fail("--unclean needs --topic T and --partition P")
        result = leader_elect_unclean(topic=topic, partition=partition, spu=spu, by="cli")
        self.stderr.write(f"WARNING: {result.warning}")
        a = result.elected
        self.emit(result.as_json(), json, f"{topic}/{partition}: SPU {a.spu} leads; "
                                          f"HW {a.old_hw} -> {a.new_hw}")


def _preferred_text(report: PreferredReport) -> str:
    lines = [f"{len(report.moved)} partition(s) moved to their preferred leader, "
             f"{len(report.not_moved)} not moved, {report.already_preferred} already led "
             f"by it"]
    if report.moved:
        lines.append(table([[f"{m.topic}/{m.partition}", m.old, m.new] for m in report.moved],
                           ["MOVED", "FROM", "TO"]))
    if report.not_moved:
        lines.append(table([[f"{n.topic}/{n.partition}", n.preferred, n.reason.value]
                            for n in report.not_moved], ["NOT MOVED", "PREFERRED", "WHY"]))
    return "\n".join(lines)
