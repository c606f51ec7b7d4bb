"""A plan's moves as the executor reads them, and the state each move is in.

The execution row stores the moves' progress as index lists (``started``,
``in_flight``) and index-keyed maps (``landed``); ``MoveState`` is what a
reader means by them, decided here once (``move_state``, ``MoveBook``).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NamedTuple


@dataclass(frozen=True, slots=True)
class PlanMove:
    """One stored move of a plan, as the executor reads it (a dataclass: a tuple's own
    ``index`` method would clash with the field). ``added`` and ``moved`` (the SPUs it
    loads, the throttle's ``moved_spus``) are made once: the executor goes over every
    move not started at every tick of a running plan."""
    index: int
    topic: str
    partition: int
    before: tuple[int, ...]
    after: tuple[int, ...]
    added: tuple[int, ...] = field(init=False, compare=False, repr=False)
    moved: frozenset[int] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "added", tuple(s for s in self.after if s not in self.before))
        object.__setattr__(self, "moved", frozenset(self.before).symmetric_difference(self.after))


def plan_moves(moves: Iterable[Mapping[str, Any]]) -> list[PlanMove]:
    return [PlanMove(i, str(m["topic"]), int(m["partition"]), tuple(m["before"]),
                     tuple(m["after"])) for i, m in enumerate(moves)]


class MoveState(str, Enum):
    WAITING = "waiting"        # not started yet: the plan is running or paused
    NOT_STARTED = "not started"  # never started: the plan ended (cancelled, failed) first
    IN_FLIGHT = "in flight"
    DONE = "done"              # reached its target
    FAILED = "failed"          # rolled back, or could not start


def move_state(index: int, *, started: Collection[int], in_flight: Collection[int],
               landed: Mapping[int, Any], ended: bool = False) -> MoveState:
    """A started move that is neither in flight nor landed rolled back or never began;
    one never started waits while the plan runs, and was never started once it ``ended``."""
    if index in landed:
        return MoveState.DONE
    if index in in_flight:
        return MoveState.IN_FLIGHT
    if index in started:
        return MoveState.FAILED
    return MoveState.NOT_STARTED if ended else MoveState.WAITING


class MoveBook(NamedTuple):
    """Every move's state, by index: the execution's index lists read as one enum each."""
    states: tuple[MoveState, ...]

    @classmethod
    def of(cls, total: int, *, started: Collection[int], in_flight: Collection[int],
           landed: Mapping[int, Any], ended: bool = False) -> MoveBook:
        started, in_flight = set(started), set(in_flight)
        return cls(tuple(move_state(i, started=started, in_flight=in_flight, landed=landed,
                                    ended=ended) for i in range(total)))

    def indexes(self, state: MoveState) -> list[int]:
        return [i for i, s in enumerate(self.states) if s is state]

    def counts(self) -> dict[MoveState, int]:
        seen = Counter(self.states)
        return {state: seen.get(state, 0) for state in MoveState}


class Finished(NamedTuple):
    """An in-flight move that ended: reached its target, or went back."""
    move: PlanMove
    reached: bool


def finished_move(move: PlanMove, replicas: Sequence[int] | None, moving: bool) -> Finished | None:
    """None while the partition's move is still in flight."""
    if moving:
        return None
    return Finished(move, replicas is not None and tuple(replicas) == move.after)
