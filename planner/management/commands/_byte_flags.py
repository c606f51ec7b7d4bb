"""``plan rebalance`` flags of plans by bytes, scope, cost and the planning snapshot."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from planner import core
from planner.bytes_plans import parse_capacities, plan_create_bytes
from planner.core.bytes_balance import ByteOptions
from planner.models import Plan

BYTES_ONLY = ("max_disk_percent", "capacity", "topics", "exclude_topics", "leaders_only",
              "snapshot")


def _byte_flags(parser: Any) -> None:
    parser.add_argument("--balance", choices=["counts", "bytes"], default="counts",
                        help="balance replica counts (default) or disk bytes per SPU")
    parser.add_argument("--max-disk-percent", type=float, default=None, metavar="P",
                        help="no SPU above P%% of its disk after the plan or mid-way "
                             "(default 80; bytes)")
    parser.add_argument("--capacity", action="append", default=[], metavar="SPU:BYTES",
                        help="an SPU's disk capacity (log dirs' totalBytes otherwise)")
    parser.add_argument("--topics", default=None, metavar="T,..",
                        help="only these topics' partitions move (bytes)")
    parser.add_argument("--exclude-topics", default=None, metavar="T,..")
    parser.add_argument("--leaders-only", action="store_true",
                        help="move leadership only, no data (off --remove-spu SPUs: a "
                             "rolling restart)")
    parser.add_argument("--snapshot", type=int, default=None, metavar="IMPORT_ID",
                        help="plan a cluster import --plan-only snapshot, not the store")
    parser.add_argument("--throttle-bytes-per-s", type=int, default=None, metavar="B",
                        help="replication throttle the ETA assumes (per SPU, each way)")
    parser.add_argument("--max-moves-per-spu", type=int, default=None, metavar="N",
                        help="moves at a time per SPU the ETA assumes")


def _topics(text: str | None) -> frozenset[str] | None:
    if text is None:
        return None
    return frozenset(t.strip() for t in text.split(",") if t.strip())


def _check(opts: dict[str, Any], fail: Callable[[str], None]) -> None:
    percent = opts["max_disk_percent"]
    if percent is not None and not 0 < percent <= 100:
        fail("--max-disk-percent must be above 0 and at most 100")
    for flag in ("throttle_bytes_per_s", "max_moves_per_spu"):
        if opts[flag] is not None and opts[flag] < 1:
            fail(f"--{flag.replace('_', '-')} must be a positive whole number")
    if opts["topics"] is not None and not _topics(opts["topics"]):
        fail("--topics needs at least one topic name")


def require_counts_flags(opts: dict[str, Any], fail: Callable[[str], None]) -> None:
    """Flags a count plan cannot honour are refused, not ignored."""
    _check(opts, fail)
    given = [f for f in BYTES_ONLY if opts[f] not in (None, False, [])]
    if given:
        fail(f"--{given[0].replace('_', '-')} needs --balance bytes")


def grid_byte_flags(parser: Any) -> None:
    """``plan grid --balance bytes``: every scenario a plan by bytes."""
    parser.add_argument("--balance", choices=["counts", "bytes"], default="counts",
                        help="plan each scenario by replica counts (default) or disk bytes")
    parser.add_argument("--max-disk-percent", type=float, default=None, metavar="P",
                        help="bytes: no SPU above P%% of its disk (default 80)")
    parser.add_argument("--capacity", action="append", default=[], metavar="SPU:BYTES")


def grid_byte_options(opts: dict[str, Any], fail: Callable[[str], None]) -> ByteOptions | None:
    percent = opts["max_disk_percent"]
    if opts["balance"] != "bytes":
        if percent is not None or opts["capacity"]:
            fail("--max-disk-percent and --capacity need --balance bytes")
        return None
    if percent is not None and not 0 < percent <= 100:
        fail("--max-disk-percent must be above 0 and at most 100")
    return ByteOptions(max_disk_percent=percent or 80.0,
                       capacities=parse_capacities(opts["capacity"]))


def byte_plan(opts: dict[str, Any], scenario: core.Scenario, options: core.Options,
              fail: Callable[[str], None], note: Callable[[str], None] = print) -> Plan:
    _check(opts, fail)
    if opts["from_kafka_json"]:
        fail("--balance bytes plans the store or a --snapshot; a reassignment JSON has no "
             "sizes (cluster import --plan-only reads the tools' outputs)")
    if opts["engine"] == "spark":
        # One greedy pass over every SPU's load: it cannot be split per topic without
        # changing its result, so it runs here, on the driver (docs/kafka-import.md).
        note("--balance bytes is one cluster-wide greedy pass: planned on the driver "
             "(in-process), not spread over Spark; plan grid --balance bytes --engine spark "
             "spreads the scenarios")
    byte_opts = ByteOptions(
        max_disk_percent=opts["max_disk_percent"] or 80.0,
        capacities=parse_capacities(opts["capacity"]), topics=_topics(opts["topics"]),
        exclude_topics=_topics(opts["exclude_topics"]) or frozenset(),
        leaders_only=opts["leaders_only"])
    return plan_create_bytes(scenario=scenario, options=options, opts=byte_opts,
                             throttle=opts["throttle_bytes_per_s"],
                             max_moves_per_spu=opts["max_moves_per_spu"],
                             snapshot_id=opts["snapshot"], by="cli")
