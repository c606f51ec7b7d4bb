"""Work other apps add to every replication tick (the plan executor, planner/execution.py).

A step runs inside the tick's locked load-modify-save, on the state the SPU
loops just advanced, so moves it starts are saved and mirrored with the tick
and no second load of 10,000 replica sets is needed. Apps install their steps
once at ready (the dependency points from the planner to the cluster, never back).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from cluster.core.replication import Action

if TYPE_CHECKING:
    from cluster.adapters.hot_state import HotState

TickStep = Callable[["HotState", int], list[Action]]
_installed: list[TickStep] = []


def install(step: TickStep) -> None:
    if step not in _installed:
        _installed.append(step)


def installed() -> tuple[TickStep, ...]:
    return tuple(_installed)
