"""Which planned moves a plan executor may start now (Cruise Control's throttle).

Cruise Control caps concurrent inter-broker partition movements per broker
(``num.concurrent.partition.movements.per.broker``, default 5) and in total; a
move counts against every SPU it copies to or drops a replica from. Moves are
taken in plan order, so a shell that orders its plan by safety keeps that order.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

DEFAULT_MAX_MOVES_PER_SPU = 5
DEFAULT_MAX_MOVES = 50


class PlannedMove(NamedTuple):
    topic: str
    partition: int
    current: tuple[int, ...]
    target: tuple[int, ...]

    @property
    def spus(self) -> frozenset[int]:
        """SPUs the move loads: those gaining a replica and those losing one."""
        return frozenset(self.current).symmetric_difference(self.target)


def spu_load(moves: Sequence[PlannedMove]) -> dict[int, int]:
    load: dict[int, int] = {}
    for m in moves:
        for s in m.spus:
            load[s] = load.get(s, 0) + 1
    return load


def moves_to_start(pending: Sequence[PlannedMove], in_flight: Sequence[PlannedMove], *,
                   max_per_spu: int = DEFAULT_MAX_MOVES_PER_SPU,
                   max_moves: int = DEFAULT_MAX_MOVES) -> list[PlannedMove]:
    """The pending moves, in order, that fit under both caps next to those in flight."""
    if max_per_spu < 1 or max_moves < 1:
        raise ValueError("max_per_spu and max_moves must be at least 1")
    load = spu_load(in_flight)
    room = max_moves - len(in_flight)
    busy = {(m.topic, m.partition) for m in in_flight}
    chosen: list[PlannedMove] = []
    for m in pending:
        if len(chosen) >= room:
            break
        if (m.topic, m.partition) in busy or any(load.get(s, 0) >= max_per_spu for s in m.spus):
            continue
        chosen.append(m)
        busy.add((m.topic, m.partition))
        for s in m.spus:
            load[s] = load.get(s, 0) + 1
    return chosen
