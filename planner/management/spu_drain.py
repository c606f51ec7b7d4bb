"""``spu drain ID [--dry-run] [--json]``: the planner's action on the cluster's ``spu`` command.

``--dry-run`` prints every move and stores nothing (Cruise Control's
remove_broker dryrun); without it the drain is stored as a plan and applied
with the throttles given; ``--wait`` returns when every replica has left.
The engine is built with it (composition/bootstrap.py).
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from planner.drain import DrainPreview, drain_preview, spu_drain
from planner.execution import plan_status, plan_wait
from planner.management.commands._plan_execution import (DEFAULT_WAIT_S, NOT_ENDED,
                                                         status_text, throttle_flags)


class DrainAction:
    name = "drain"

    def add_parser(self, actions: Any) -> None:
        drain = actions.add_parser("drain", help="move the SPU's replicas, and only those, to "
                                                 "other SPUs, so it can be unregistered")
        drain.add_argument("spu_id", type=int, metavar="ID")
        drain.add_argument("--dry-run", action="store_true",
                           help="list every move and store nothing")
        drain.add_argument("--max-moves-per-spu", type=int,
                           default=settings.PLAN_MAX_MOVES_PER_SPU)
        drain.add_argument("--max-moves", type=int, default=settings.PLAN_MAX_MOVES)
        throttle_flags(drain)
        drain.add_argument("--wait", action="store_true", help="return when the plan has ended")
        drain.add_argument("--timeout-s", type=float, default=DEFAULT_WAIT_S)
        drain.add_argument("--json", action="store_true")

    def handle(self, command: Any, *, spu_id: int, dry_run: bool, max_moves_per_spu: int,
               max_moves: int, throttle_bytes_per_s: int | None, wait: bool, timeout_s: float,
               json: bool, **_: Any) -> None:
        if dry_run:
            preview = drain_preview(spu_id=spu_id)
            command.emit(preview, json, preview_text(preview))
            return
        execution = spu_drain(spu_id=spu_id, max_moves_per_spu=max_moves_per_spu,
                              max_moves=max_moves, throttle_bytes_per_s=throttle_bytes_per_s,
                              by="cli")
        if wait and not plan_wait(plan_id=execution.plan_id, timeout_s=timeout_s):
            raise CommandError(f"the drain of SPU {spu_id} (plan {execution.plan_id}) has not "
                               f"ended after {timeout_s:g} s", returncode=NOT_ENDED)
        status = plan_status(plan_id=execution.plan_id)
        command.emit(status, json, f"drain of SPU {spu_id}: " + status_text(status))


def preview_text(p: DrainPreview) -> str:
    lines = [f"drain of SPU {p['spu']} (dry run, nothing changed): {p['replicas']} replica(s) "
             f"move, {p['leader_changes']} leadership change(s)"]
    lines += [f"  {m['topic']}/{m['partition']}: {m['before']} -> {m['after']}"
              + (" (leader moves)" if m["leader_change"] else "") for m in p["moves"]]
    return "\n".join(lines)
