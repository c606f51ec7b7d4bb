"""Where a plan being carried out stands, SPU by SPU, and move by move.

A move is *in* for every SPU it adds a replica to and *out* for every SPU it
drops one from; a move that only reorders a replica list (a leader change)
touches no SPU here. ``landed`` maps the index of each move that reached its
target to the bytes copied to each of its new replicas, so an SPU's
``bytes_moved`` is what was copied onto it and the SPUs' figures add up to
the execution's ``bytes_moved``.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypedDict

from planner.core.execution.moves import MoveState, PlanMove, move_state

# A move's outcome is its state (planner/core/execution/moves.py); the old names stay.
MoveOutcome = MoveState
move_outcome = move_state


class SpuProgress(TypedDict):
    spu: int
    moves_in_done: int
    moves_in_total: int
    moves_out_done: int
    moves_out_total: int
    moves_in_flight: int
    bytes_moved: int


def removed(move: PlanMove) -> tuple[int, ...]:
    return tuple(s for s in move.before if s not in move.after)


def _blank(spu: int) -> SpuProgress:
    return SpuProgress(spu=spu, moves_in_done=0, moves_in_total=0, moves_out_done=0,
                       moves_out_total=0, moves_in_flight=0, bytes_moved=0)


def per_spu_progress(moves: Sequence[PlanMove], landed: Mapping[int, int],
                     in_flight: Iterable[int]) -> list[SpuProgress]:
    """One row per SPU the plan adds replicas to or drops them from, by SPU id."""
    flying = set(in_flight)
    rows: dict[int, SpuProgress] = {}
    for move in moves:
        done = move.index in landed
        for spu in move.added:
            row = rows.setdefault(spu, _blank(spu))
            row["moves_in_total"] += 1
            row["moves_in_done"] += done
            row["bytes_moved"] += landed.get(move.index, 0)
        for spu in removed(move):
            row = rows.setdefault(spu, _blank(spu))
            row["moves_out_total"] += 1
            row["moves_out_done"] += done
        if move.index in flying:
            for spu in {*move.added, *removed(move)}:
                rows[spu]["moves_in_flight"] += 1
    return [rows[spu] for spu in sorted(rows)]
