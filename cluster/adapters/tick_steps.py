"""Work other apps add to every replication tick (the plan executor, planner/execution.py).

A step runs inside the tick's locked load-modify-save, on the state the SPU
loops just advanced, so moves it starts are saved and mirrored with the tick
and no second load of 10,000 replica sets is needed. Apps install their steps
once at ready (the dependency points from the planner to the cluster, never back).

Nothing a step decides may reach the database before the tick's fenced save
lands: a step hands such writes to ``after_save``, and the shell runs them only
once the save succeeded (a refused save drops them with the rest of the step).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from cluster.core.replication import Action

if TYPE_CHECKING:
    from cluster.adapters.hot_state import HotState

TickStep = Callable[["HotState", int], list[Action]]
AfterSave = Callable[[], None]
_installed: list[TickStep] = []
_pending: ContextVar[list[AfterSave] | None] = ContextVar("tick_after_save", default=None)


def install(step: TickStep) -> None:
    if step not in _installed:
        _installed.append(step)


def installed() -> tuple[TickStep, ...]:
    return tuple(_installed)


def after_save(callback: AfterSave) -> None:
    """Run ``callback`` once the current unit of work's fenced save has landed."""
    pending = _pending.get()
    if pending is None:
        raise RuntimeError("after_save outside a unit of work (run it inside a tick step)")
    pending.append(callback)


@contextmanager
def collecting_after_save() -> Iterator[list[AfterSave]]:
    """The shell's side: collect a unit of work's callbacks; it runs them after the save."""
    pending: list[AfterSave] = []
    token = _pending.set(pending)
    try:
        yield pending
    finally:
        _pending.reset(token)
