"""``plan rebalance|grid|export``: minimal-movement what-if plans."""
from __future__ import annotations

import json as jsonlib
from pathlib import Path
from typing import Any

from cluster.core.spus import rack_problem
from cluster.management.commands._cli import SubcommandCommand, table
from planner.management.commands._byte_flags import (_byte_flags, byte_plan,
                                                     grid_byte_flags, grid_byte_options,
                                                     require_counts_flags)
from planner.management.commands._plan_execution import ExecutionActions
from planner import core
from planner.core.scenarios import MAX_UP_TO
from planner.core.throttle_export import throttle_script
from planner.follow_up import plan_rollback
from planner.models import Plan
from planner.services import (plan_create, plan_document, plan_exports, plan_grid,
                              scenario_from_input)

GRID_COLUMNS = ["replicas_moved", "lower_bound", "leader_changes", "replica_spread",
                "leader_spread", "rack_violations", "failover_concentration"]


class Command(ExecutionActions, SubcommandCommand):
    help = "Plan minimal-movement rebalancing for what-if scenarios."

    def add_actions(self, actions: Any) -> None:
        rebalance = actions.add_parser("rebalance", help="plan one scenario and store the plan")
        rebalance.add_argument("--add-spu", action="append", default=[], metavar="ID:RACK")
        rebalance.add_argument("--remove-spu", action="append", type=int, default=[], metavar="ID")
        rebalance.add_argument("--lose-rack", action="append", default=[], metavar="RACK")
        rebalance.add_argument("--replication", action="append", default=[], metavar="TOPIC:RF")
        _option_flags(rebalance)
        rebalance.add_argument("--from-kafka-json", type=Path, default=None, metavar="FILE")
        rebalance.add_argument("--export-kafka", type=Path, default=None, metavar="FILE")
        rebalance.add_argument("--export-fluvio", type=Path, default=None, metavar="DIR")
        rebalance.add_argument("--json", action="store_true")
        _byte_flags(rebalance)
        grid = actions.add_parser("grid", help="evaluate every single-SPU removal, rack loss "
                                               "and rack growth")
        grid.add_argument("--up-to", type=int, default=3,
                          help=f"add 1..K SPUs to each rack (K at most {MAX_UP_TO})")
        _option_flags(grid)
        grid_byte_flags(grid)
        grid.add_argument("--json", action="store_true")
        export = actions.add_parser("export", help="write a stored plan's files")
        export.add_argument("plan_id", type=int)
        export.add_argument("--kafka", type=Path, default=None, metavar="FILE")
        export.add_argument("--fluvio", type=Path, default=None, metavar="DIR")
        export.add_argument("--rollback", type=Path, default=None, metavar="FILE",
                            help="today's assignment of the partitions the plan moves (Kafka "
                                 "reassignment JSON): keep it before apply to undo the plan")
        export.add_argument("--throttle", type=Path, default=None, metavar="FILE",
                            help="kafka-configs.sh commands that throttle the reassignment "
                                 "and remove the throttle after --verify (a shell script)")
        export.add_argument("--throttle-bytes-per-s", type=int, default=None, metavar="B")
        self.add_execution_actions(actions)

    def handle_rebalance(self, **opts: Any) -> None:
        for text in opts["add_spu"]:
            self.require_rack(text.partition(":")[2])
        scenario = scenario_from_input(add_spus=opts["add_spu"], remove_spus=opts["remove_spu"],
                                       lose_racks=opts["lose_rack"],
                                       replication=opts["replication"])
        if opts["balance"] == "bytes":
            record = byte_plan(opts, scenario, _options(opts), self.fail, self.stderr.write)
        else:
            kafka = (self.read_text(opts["from_kafka_json"], "a Kafka reassignment JSON file")
                     if opts["from_kafka_json"] else None)
            require_counts_flags(opts, self.fail)
            record = plan_create(scenario=scenario, options=_options(opts),
                                 engine=opts["engine"], kafka_json=kafka, by="cli",
                                 throttle=opts["throttle_bytes_per_s"],
                                 max_moves_per_spu=opts["max_moves_per_spu"])
        self._export(record, opts["export_kafka"], opts["export_fluvio"])
        self.emit(plan_document(record), opts["json"], _summary(record))

    def handle_grid(self, **opts: Any) -> None:
        if not 0 <= opts["up_to"] <= MAX_UP_TO:
            self.fail(f"--up-to must be from 0 to {MAX_UP_TO}")
        by_bytes = grid_byte_options(opts, self.fail)
        rows = plan_grid(options=_options(opts), engine=opts["engine"], up_to=opts["up_to"],
                         by_bytes=by_bytes)
        columns = GRID_COLUMNS if by_bytes is None else ["bytes_moved", "disk_spread",
                                                         *GRID_COLUMNS]
        text = table([[r["scenario"]] + [_fmt(r.get(c)) for c in columns] for r in rows],
                     ["SCENARIO"] + [c.upper() for c in columns])
        self.emit(rows, opts["json"], text)

    def handle_export(self, plan_id: int, kafka: Path | None, fluvio: Path | None,
                      rollback: Path | None, throttle: Path | None = None,
                      throttle_bytes_per_s: int | None = None, **_: Any) -> None:
        record = Plan.objects.filter(pk=plan_id).first()
        if record is None:
            self.fail(f"plan {plan_id} not found")
        if not kafka and not fluvio and not rollback and not throttle:
            self.fail("give --kafka FILE, --fluvio DIR, --rollback FILE and/or --throttle FILE")
        if throttle and (throttle_bytes_per_s is None or throttle_bytes_per_s < 1):
            self.fail("--throttle needs --throttle-bytes-per-s B (a positive rate)")
        self._export(record, kafka, fluvio)
        if throttle and throttle_bytes_per_s is not None:
            script = throttle_script(core.plan_from_dict(plan_document(record)).moves,
                                     throttle_bytes_per_s)
            self._write(throttle, script)
            self.stderr.write(f"wrote the throttle commands to {throttle}")
        if rollback:
            self._write(rollback, jsonlib.dumps(plan_rollback(record), indent=2))
            self.stderr.write(f"wrote the rollback file (today's assignment) to {rollback}")

    def _write(self, path: Path, text: str) -> None:
        try:
            path.write_text(text)
        except OSError as exc:
            self.fail(f"cannot write {path}: {exc.strerror}")

    def require_rack(self, rack: str) -> None:
        # No SPU could be registered in it (cluster/core/spus.py), so no plan could be applied.
        if rack and rack_problem(rack):
            shown = rack if len(rack) <= 63 else f"of {len(rack):,} characters"
            self.fail(f"--add-spu rack {shown} must be 1-63 letters, digits, '.', '_' or '-'")


    def _export(self, record: Plan, kafka: Path | None, fluvio: Path | None) -> None:
        files = plan_exports(record)
        if kafka:
            kafka.write_text(jsonlib.dumps(files["kafka"], indent=2))
            self.stderr.write(f"wrote Kafka reassignment JSON to {kafka}")
        if fluvio:
            fluvio.mkdir(parents=True, exist_ok=True)
            for topic, body in files["fluvio"].items():
                (fluvio / f"{topic}.json").write_text(jsonlib.dumps(body, indent=2))
            self.stderr.write(f"wrote {len(files['fluvio'])} Fluvio assignment files to {fluvio}/")


def _option_flags(parser: Any) -> None:
    parser.add_argument("--no-anti-affinity", action="store_true")
    parser.add_argument("--no-leader-balance", action="store_true")
    parser.add_argument("--no-order-optimisation", action="store_true")
    parser.add_argument("--engine", choices=["local", "spark"], default="local")


def _options(opts: dict[str, Any]) -> core.Options:
    return core.Options(anti_affinity=not opts["no_anti_affinity"],
                        balance_leaders=not opts["no_leader_balance"],
                        optimise_order=not opts["no_order_optimisation"])


def _fmt(value: object) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _summary(record: Plan) -> str:
    m, b = record.metrics, record.before
    lines = [f"plan {record.pk}: {record.name} ({record.engine}, {record.elapsed_ms} ms)",
             f"  replicas moved {m.get('replicas_moved')} (lower bound {m.get('lower_bound')}), "
             f"partitions changed {m.get('partitions_changed')}, "
             f"leader changes {m.get('leader_changes')}"]
    for key in ("replica_spread", "leader_spread", "topic_replica_spread", "rack_violations",
                "failover_concentration"):
        lines.append(f"  {key:<24} {_fmt(b.get(key, '-')):>8} -> {_fmt(m.get(key))}")
    lines += [f"  {mv['topic']}/{mv['partition']}: {mv['before']} -> {mv['after']}"
              for mv in record.moves[:20]]
    if len(record.moves) > 20:
        lines.append(f"  ... {len(record.moves) - 20} more (use --json or --export-kafka)")
    return "\n".join(lines)
