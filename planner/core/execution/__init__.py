"""Carrying a stored plan out: the rules, without the store (Cruise Control's executor).

An execution is pending until applied, then running; paused stops new moves
(those in flight finish); cancelled stops new moves and asks the replication
core to roll back those in flight (it finishes forward where a rollback would
cost LRS members). A running execution ends done when every move reached its
target, failed when some rolled back or could not start (``states``). Each move
is waiting, in flight, done, failed or never started (``moves.MoveState``).
Applying is refused when the plan's "current" layout is no longer the cluster's,
or when a target names an SPU that is not registered and online
(``layout.preparation_steps`` says how to make it ready).

Beside Cruise Control's move counts, a byte-rate throttle (Kafka's ``--throttle``)
paces the copies with a token bucket; both may change while the plan runs
(``throttle``). ``pace`` gives the copy rate and a steady estimated finish, and
``layout.rollback_reassignment`` the file that undoes a plan.
"""
from __future__ import annotations

from planner.core.execution.layout import (Layout, NotReady, layout_drift, layout_of,
                                           preparation_steps, rollback_reassignment,
                                           targets_not_ready, unavailable_targets)
from planner.core.execution.moves import (Finished, MoveBook, MoveState, PlanMove,
                                          finished_move, move_state, plan_moves)
from planner.core.execution.pace import (HALF_LIFE_S, Pace, copy_rate, eta_s, held_pace,
                                         next_pace, pace_started, steady_eta_s)
from planner.core.execution.states import (CANCELLABLE, PAUSABLE, RESUMABLE, RETUNABLE,
                                           ExecutionState, final_state)
from planner.core.execution.throttle import (BURST_S, KEEP, MAX_BYTES_PER_S, ByteBucket, Keep,
                                             Throttles, full_bucket, refill, retuned,
                                             throttle_problem, within_byte_rate)

__all__ = [
    "BURST_S", "CANCELLABLE", "HALF_LIFE_S", "KEEP", "MAX_BYTES_PER_S", "PAUSABLE",
    "RESUMABLE", "RETUNABLE", "ByteBucket", "ExecutionState", "Finished", "Keep", "Layout",
    "MoveBook", "MoveState", "NotReady", "Pace", "PlanMove", "Throttles", "copy_rate",
    "eta_s", "final_state", "held_pace", "finished_move", "full_bucket", "layout_drift", "layout_of",
    "move_state", "next_pace", "pace_started", "plan_moves", "preparation_steps", "refill",
    "retuned", "rollback_reassignment", "steady_eta_s", "targets_not_ready",
    "throttle_problem", "unavailable_targets", "within_byte_rate",
]
