"""``plan apply|status|pause|resume|cancel|throttle PLAN_ID``: carrying a stored plan out.

A mixin of the ``plan`` command, kept apart from planning. ``apply --wait``
returns when the plan has ended: a running worker carries it out, otherwise
the replication ticks run here.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError

from planner.core.execution import KEEP
from planner.execution import (ExecutionStatus, plan_apply, plan_cancel, plan_pause,
                               plan_resume, plan_status, plan_throttle, plan_wait)

DEFAULT_WAIT_S = 3600.0
NOT_ENDED = 1
BAD_INPUT = 2


class ExecutionActions:
    """Subcommands and handlers; the host is a SubcommandCommand (emit, fail)."""

    def add_execution_actions(self, actions: Any) -> None:
        apply = actions.add_parser("apply", help="carry a stored plan out")
        apply.add_argument("plan_id", type=int)
        apply.add_argument("--max-moves-per-spu", type=int, default=settings.PLAN_MAX_MOVES_PER_SPU)
        apply.add_argument("--max-moves", type=int, default=settings.PLAN_MAX_MOVES)
        throttle_flags(apply)
        apply.add_argument("--wait", action="store_true", help="return when the plan has ended")
        apply.add_argument("--timeout-s", type=float, default=DEFAULT_WAIT_S,
                           help="with --wait: give up waiting after this long (exit 1)")
        apply.add_argument("--json", action="store_true")
        for name, text in (("status", "show a plan's execution"),
                           ("pause", "start no new moves (those in flight finish)"),
                           ("resume", "start moves again"),
                           ("cancel", "start no new moves and roll back those in flight")):
            sub = actions.add_parser(name, help=text)
            sub.add_argument("plan_id", type=int)
            sub.add_argument("--json", action="store_true")
        self._add_throttle(actions)

    def _add_throttle(self, actions: Any) -> None:
        throttle = actions.add_parser("throttle", help="change a running or paused plan's "
                                                       "throttles (from the executor's next step)")
        throttle.add_argument("plan_id", type=int)
        throttle.add_argument("--max-moves-per-spu", type=int, default=KEEP)
        throttle.add_argument("--max-moves", type=int, default=KEEP)
        rate = throttle.add_mutually_exclusive_group()
        rate.add_argument("--throttle-bytes-per-s", type=int, default=KEEP, metavar="BYTES",
                          help="copy at most this many bytes a second")
        rate.add_argument("--no-byte-throttle", dest="throttle_bytes_per_s",
                          action="store_const", const=None, help="remove the byte throttle")
        throttle.add_argument("--json", action="store_true")

    def handle_apply(self, plan_id: int, max_moves_per_spu: int, max_moves: int,
                     throttle_bytes_per_s: int | None, wait: bool, timeout_s: float, json: bool,
                     **_: Any) -> None:
        plan_apply(plan_id=plan_id, max_moves_per_spu=max_moves_per_spu, max_moves=max_moves,
                   throttle_bytes_per_s=throttle_bytes_per_s, by="cli")
        if wait and not plan_wait(plan_id=plan_id, timeout_s=timeout_s):
            self._show(plan_status(plan_id=plan_id), json)
            raise CommandError(f"plan {plan_id} has not ended after {timeout_s:g} s",
                               returncode=NOT_ENDED)
        self._show(plan_status(plan_id=plan_id), json)

    def handle_status(self, plan_id: int, json: bool, **_: Any) -> None:
        self._show(plan_status(plan_id=plan_id), json)

    def handle_pause(self, plan_id: int, json: bool, **_: Any) -> None:
        plan_pause(plan_id=plan_id, by="cli")
        self._show(plan_status(plan_id=plan_id), json)

    def handle_resume(self, plan_id: int, json: bool, **_: Any) -> None:
        plan_resume(plan_id=plan_id, by="cli")
        self._show(plan_status(plan_id=plan_id), json)

    def handle_cancel(self, plan_id: int, json: bool, **_: Any) -> None:
        plan_cancel(plan_id=plan_id, by="cli")
        self._show(plan_status(plan_id=plan_id), json)

    def handle_throttle(self, plan_id: int, max_moves_per_spu: Any, max_moves: Any,
                        throttle_bytes_per_s: Any, json: bool, **_: Any) -> None:
        if all(v is KEEP for v in (max_moves_per_spu, max_moves, throttle_bytes_per_s)):
            raise CommandError("give --max-moves-per-spu N, --max-moves N, "
                               "--throttle-bytes-per-s B or --no-byte-throttle",
                               returncode=BAD_INPUT)
        plan_throttle(plan_id=plan_id, max_moves_per_spu=max_moves_per_spu,
                      max_moves=max_moves, throttle_bytes_per_s=throttle_bytes_per_s, by="cli")
        self._show(plan_status(plan_id=plan_id), json)

    def _show(self, status: ExecutionStatus, as_json: bool) -> None:
        self.emit(status, as_json, status_text(status))  # type: ignore[attr-defined]


def throttle_flags(parser: Any) -> None:
    """The byte-rate throttle beside the move counts (``plan apply``, ``spu drain``)."""
    parser.add_argument("--throttle-bytes-per-s", type=int, default=None, metavar="BYTES",
                        help="copy at most this many bytes a second (Kafka's --throttle); "
                             "no byte throttle by default")


def status_text(s: ExecutionStatus) -> str:
    text = (f"plan {s['id']}: {s['state']}, {s['moves_done']}/{s['moves_total']} moves done, "
            f"{s['moves_in_flight']} in flight, {s['moves_failed']} failed, "
            f"{s['bytes_copied']:,} bytes copied")
    if s["bytes_per_s"] is not None:
        text += f" at {s['bytes_per_s']:,.0f} bytes/s"
    if s["throttle_bytes_per_s"]:
        text += f" (throttle {s['throttle_bytes_per_s']:,} bytes/s)"
    if s["eta_s"] is not None:
        text += f", about {s['eta_s']:,.0f} s left"
    return text + (f" ({s['reason']})" if s["reason"] else "")
