"""``net cut --spu N [--from controller|spu M|producers] [--one-way [--inbound]]`` /
``net cut --racks A,B``
/ ``net heal [--all | --id N]`` / ``net status [--json]`` / ``net report [--json]``.

Rehearse network partitions (docs/network-partitions.md). ``--one-way`` drops
only what SPU N sends (the far end still reaches it); ``--one-way --inbound``
only what it is sent (from the controller: its session holds, it learns no new
epoch). ``--racks A,B`` splits
rack group A from rack group B (``A+B,C`` for groups of several racks; ``A``
alone: A from every other rack); the SC stays with the larger group. Like
``produce``, the commands run the engine here when no worker does;
``--settle S`` waits up to S seconds for the sessions and elections to settle.
"""
from __future__ import annotations

from typing import Any

from cluster.management.commands._cli import SubcommandCommand, table
from cluster.services.network import (CutRequest, net_cut, net_heal, net_report, net_status,
                                      net_step)


class Command(SubcommandCommand):
    help = "Cut and heal network links between SPUs, the controller and producers."
    redis_actions = frozenset({"cut", "heal", "status", "report"})

    def add_actions(self, actions: Any) -> None:
        cut = actions.add_parser("cut", help="cut links (two-way unless --one-way)")
        who = cut.add_mutually_exclusive_group(required=True)
        who.add_argument("--spu", type=int, help="the SPU whose links are cut")
        who.add_argument("--racks", help="rack groups to split: A,B or A+B,C")
        cut.add_argument("--from", dest="source", nargs="+", default=["controller"],
                         metavar="END", help="controller (default), spu M, or producers")
        cut.add_argument("--one-way", action="store_true", dest="one_way",
                         help="drop only what the SPU sends")
        cut.add_argument("--inbound", action="store_true",
                         help="with --one-way: drop only what the SPU is sent")
        heal = actions.add_parser("heal", help="heal the latest cut, one (--id) or all")
        heal.add_argument("--all", action="store_true", dest="heal_all")
        heal.add_argument("--id", type=int, default=None, dest="cut_id")
        for parser in (cut, heal):
            parser.add_argument("--settle", type=float, default=0.0, dest="settle_s",
                                help="wait up to S seconds for sessions and elections")
        for name in ("status", "report"):
            actions.add_parser(name, help=f"the network {name}").add_argument(
                "--json", action="store_true")
        for parser in (cut, heal):
            parser.add_argument("--json", action="store_true")

    def check_input(self, action: str, **options: Any) -> None:
        if action == "cut":
            source = options["source"]
            if source[0] == "spu" and len(source) != 2:
                self.fail("--from spu needs the other SPU's id: --from spu M")
            if source[0] != "spu" and len(source) != 1:
                self.fail(f"--from {source[0]} takes no more words")
            if len(source) == 2 and not source[1].isdigit():
                self.fail(f"--from spu M: M must be an SPU id, not {source[1]!r}")
            if options["inbound"] and not options["one_way"]:
                self.fail("--inbound goes with --one-way: a cut both ways has no direction")
        if action in ("cut", "heal") and not 0 <= options["settle_s"] <= 600:
            self.fail("--settle is from 0 to 600 seconds")

    def handle_cut(self, spu: int | None, racks: str | None, source: list[str], one_way: bool,
                   inbound: bool, settle_s: float, json: bool, **_: Any) -> None:
        peer = int(source[1]) if len(source) == 2 else None
        cut = net_cut(request=CutRequest(spu, source[0], peer, racks, one_way, inbound),
                      by="cli")
        settled = net_step(settle_s=settle_s)
        self.emit({**cut, "settled": settled}, json, f"cut {cut['id']}: {cut['label']}")

    def handle_heal(self, heal_all: bool, cut_id: int | None, settle_s: float, json: bool,
                    **_: Any) -> None:
        out = net_heal(cut_id=cut_id, heal_all=heal_all, by="cli")
        settled = net_step(settle_s=settle_s)
        labels = ", ".join(c["label"] for c in out["healed"])
        self.emit({**out, "settled": settled}, json,
                  f"healed {labels}; rejoined SPUs {out['rejoined'] or 'none'}; "
                  f"{out['in_force']} cut(s) still in force")

    def handle_status(self, json: bool, **_: Any) -> None:
        cuts = net_status()
        self.emit(cuts, json, table([[c["id"], c["label"], c["since_ms"]] for c in cuts],
                                    ["ID", "CUT", "SINCE_MS"]) if cuts else "no cut in force")

    def handle_report(self, json: bool, **_: Any) -> None:
        report = net_report()
        self.emit(report, json, _report_text(report))


def _report_text(r: dict[str, Any] | None) -> str:
    if r is None:
        return "no rehearsal yet"
    lines = [f"cuts: {'; '.join(r['cuts'])}",
             f"acknowledged writes kept: {r['acknowledged_kept']['acks_1']} acks=1, "
             f"{r['acknowledged_kept']['acks_all']} acks=all",
             # Counted apart: nobody waits for them, /metrics counts them (docs).
             "simulated producers' acks=1 writes (unanswered): "
             f"{r.get('simulated', {}).get('1', 0)}",
             f"acks=1 writes truncated: {r['acks1_truncated_count']}",
             f"unacknowledged writes lost: {r['unacknowledged_lost']}",
             f"refused writes during the cut: {r['refused_total']}"]
    if r.get("counts_complete") is False:
        lines.append("COUNTS INCOMPLETE: sharded ticks ran during the rehearsal and the "
                     "writes they took are not counted (REPLICATION_SHARDS > 1)")
    if r["acks1_truncated"]:
        lines.append(table([[f"{t['topic']}/{t['partition']}", t["offset"], t["record"], t["spu"]]
                            for t in r["acks1_truncated"]], ["TRUNCATED", "OFFSET", "RECORD",
                                                             "SPU"]))
    if r["leaderless_ms"]:
        lines.append(table([[name, ms] for name, ms in sorted(r["leaderless_ms"].items())],
                           ["PARTITION", "LEADERLESS_MS"]))
    return "\n".join(lines)
