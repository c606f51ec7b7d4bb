"""Carrying a stored plan out: the rules, without the store (Cruise Control's executor).

An execution is pending until applied, then running; paused stops new moves
(those in flight finish); cancelled stops new moves and asks the replication
core to roll back those in flight (it finishes forward where a rollback would
cost LRS members). A running execution ends done when every move reached its
target, failed when some rolled back or could not start. Applying is refused
when the plan's "current" layout is no longer the cluster's, or when a target
names an SPU that is not registered and online: the plan was made for another
cluster.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, NamedTuple

Layout = Mapping[str, Sequence[Sequence[int]]]  # topic -> replica lists by partition


class ExecutionState(str, Enum):
    PENDING = "pending"
    RUNNING = "running"
    PAUSED = "paused"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


# Which request may follow which state (pause, resume, cancel).
PAUSABLE = frozenset({ExecutionState.RUNNING})
RESUMABLE = frozenset({ExecutionState.PAUSED})
CANCELLABLE = frozenset({ExecutionState.RUNNING, ExecutionState.PAUSED})


class PlanMove(NamedTuple):
    """One stored move of a plan, as the executor reads it."""
    index: int
    topic: str
    partition: int
    before: tuple[int, ...]
    after: tuple[int, ...]

    @property
    def added(self) -> tuple[int, ...]:
        return tuple(s for s in self.after if s not in self.before)


def plan_moves(moves: Iterable[Mapping[str, Any]]) -> list[PlanMove]:
    return [PlanMove(i, str(m["topic"]), int(m["partition"]), tuple(m["before"]),
                     tuple(m["after"])) for i, m in enumerate(moves)]


def layout_of(current: Mapping[str, Any]) -> dict[str, list[list[int]]]:
    """A plan's "current" (planner serial form) as topic -> replica lists."""
    return {t["name"]: [list(p["replicas"]) for p in sorted(t["partitions"], key=lambda p: p["id"])]
            for t in current.get("topics", ())}


def layout_drift(planned: Layout, actual: Layout) -> list[str]:
    """Where the cluster no longer has the layout the plan started from."""
    problems = []
    for topic, replica_lists in sorted(planned.items()):
        now = actual.get(topic)
        if now is None:
            problems.append(f"topic {topic} no longer exists")
            continue
        changed = [p for p, reps in enumerate(replica_lists)
                   if p >= len(now) or list(now[p]) != list(reps)]
        if changed or len(now) != len(replica_lists):
            shown = ", ".join(f"{topic}/{p}" for p in changed[:5]) or f"{topic} partition count"
            problems.append(f"{shown} changed since the plan was made")
    return problems


def unavailable_targets(moves: Sequence[PlanMove], registered: Iterable[int],
                        online: Iterable[int]) -> list[str]:
    """Target SPUs that are not registered, or registered but not online."""
    named = sorted({s for m in moves for s in m.after})
    known, up = set(registered), set(online)
    missing = [s for s in named if s not in known]
    down = [s for s in named if s in known and s not in up]
    return ([f"SPU {s} is not registered" for s in missing]
            + [f"SPU {s} is not online" for s in down])


class Finished(NamedTuple):
    """An in-flight move that ended: reached its target, or went back."""
    move: PlanMove
    reached: bool


def finished_move(move: PlanMove, replicas: Sequence[int] | None, moving: bool) -> Finished | None:
    """None while the partition's move is still in flight."""
    if moving:
        return None
    return Finished(move, replicas is not None and tuple(replicas) == move.after)


def final_state(state: ExecutionState, *, total: int, started: int, in_flight: int,
                failed: int) -> ExecutionState | None:
    """The state an execution ends in once nothing is left to do, else None."""
    if in_flight:
        return None
    if state is ExecutionState.RUNNING and started >= total:
        return ExecutionState.FAILED if failed else ExecutionState.DONE
    return None
