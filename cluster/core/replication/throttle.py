"""Which planned moves a plan executor may start now (Cruise Control's throttle).

Cruise Control caps concurrent inter-broker partition movements per broker
(``num.concurrent.partition.movements.per.broker``, default 5) and in total; a
move counts against every SPU it copies to or drops a replica from. Moves are
taken in plan order, so a shell that orders its plan by safety keeps that order.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, Sequence, TypeVar

DEFAULT_MAX_MOVES_PER_SPU = 5
DEFAULT_MAX_MOVES = 50


class PlannedMove(Protocol):
    """What the throttle reads of a planned move: no type of its own, the caller's moves
    (the planner's ``PlanMove``) are passed and returned as they are."""

    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int: ...

    @property
    def before(self) -> tuple[int, ...]: ...

    @property
    def after(self) -> tuple[int, ...]: ...


M = TypeVar("M", bound=PlannedMove)


def moved_spus(move: PlannedMove) -> frozenset[int]:
    """SPUs the move loads: those gaining a replica and those losing one."""
    return frozenset(move.before).symmetric_difference(move.after)


def spu_load(moves: Sequence[PlannedMove]) -> dict[int, int]:
    load: dict[int, int] = {}
    for m in moves:
        for s in moved_spus(m):
            load[s] = load.get(s, 0) + 1
    return load


def moves_to_start(pending: Sequence[M], in_flight: Sequence[PlannedMove], *,
                   max_per_spu: int = DEFAULT_MAX_MOVES_PER_SPU,
                   max_moves: int = DEFAULT_MAX_MOVES,
                   spus_of: Callable[[M], frozenset[int]] = moved_spus) -> list[M]:
    """The pending moves, in order, that fit under both caps next to those in flight.
    ``spus_of``: the SPUs a move loads (``moved_spus``; a caller that keeps them per move
    passes its own: a plan of thousands of moves is scanned whole while its SPUs are full)."""
    if max_per_spu < 1 or max_moves < 1:
        raise ValueError("max_per_spu and max_moves must be at least 1")
    load = spu_load(in_flight)
    full = {s for s, n in load.items() if n >= max_per_spu}
    room = max_moves - len(in_flight)
    busy = {(m.topic, m.partition) for m in in_flight}
    chosen: list[M] = []
    for m in pending:
        if len(chosen) >= room:
            break
        spus = spus_of(m)
        if not full.isdisjoint(spus) or (m.topic, m.partition) in busy:
            continue
        chosen.append(m)
        busy.add((m.topic, m.partition))
        for s in spus:
            load[s] = load.get(s, 0) + 1
            if load[s] >= max_per_spu:
                full.add(s)
    return chosen
