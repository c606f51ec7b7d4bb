"""What state a plan's execution is in, which request may follow which, and how it ends."""
from __future__ import annotations

from enum import Enum


class ExecutionState(str, Enum):
    PENDING = "pending"
    RUNNING = "running"
    PAUSED = "paused"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


# Which request may follow which state (pause, resume, cancel, a change of throttle).
PAUSABLE = frozenset({ExecutionState.RUNNING})
RESUMABLE = frozenset({ExecutionState.PAUSED})
CANCELLABLE = frozenset({ExecutionState.RUNNING, ExecutionState.PAUSED})
# A paused plan's throttle may change too: it applies from the resume on.
RETUNABLE = frozenset({ExecutionState.RUNNING, ExecutionState.PAUSED})


def final_state(state: ExecutionState, *, total: int, started: int, in_flight: int,
                failed: int) -> ExecutionState | None:
    """The state an execution ends in once nothing is left to do, else None."""
    if in_flight:
        return None
    if state is ExecutionState.RUNNING and started >= total:
        return ExecutionState.FAILED if failed else ExecutionState.DONE
    return None
