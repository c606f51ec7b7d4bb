"""A plan's life as the workbench tracks it: states, engine choice, progress estimate.

States follow the ``plan status`` contract (pending, running, paused, done,
cancelled, failed) with one state before it: ``computing`` while the planner
works. A computed plan waits as ``pending`` until it is applied.
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class PlanState(StrEnum):
    COMPUTING = "computing"
    PENDING = "pending"
    RUNNING = "running"
    PAUSED = "paused"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


class GridState(StrEnum):
    COMPUTING = "computing"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


class EngineChoice(StrEnum):
    AUTO = "auto"
    LOCAL = "local"
    SPARK = "spark"


# States in which nothing more will happen to a plan on its own.
FINAL_STATES = frozenset({PlanState.PENDING, PlanState.DONE, PlanState.CANCELLED,
                          PlanState.FAILED, GridState.DONE})


class Stage(StrEnum):
    QUEUED = "queued"
    PREPARING = "preparing"
    PLACING = "placing replicas"
    FINISHING = "leaders and order"
    SCENARIOS = "planning scenarios"
    STORING = "storing"


# The share of the whole job each stage covers, so one bar runs 0..1 across stages.
STAGE_SPANS: dict[Stage, tuple[float, float]] = {
    Stage.QUEUED: (0.0, 0.0), Stage.PREPARING: (0.0, 0.05), Stage.PLACING: (0.05, 0.8),
    Stage.FINISHING: (0.8, 0.95), Stage.SCENARIOS: (0.0, 0.95), Stage.STORING: (0.95, 1.0)}


class Cancelled(Exception):
    """The operator cancelled the computation; nothing is stored."""


def choose_engine(choice: EngineChoice, work: int, threshold: int) -> EngineChoice:
    """``auto`` runs in-process up to ``threshold`` units of work (partitions x scenarios)."""
    if choice != EngineChoice.AUTO:
        return choice
    return EngineChoice.SPARK if work > threshold else EngineChoice.LOCAL


@dataclass(frozen=True)
class Progress:
    stage: Stage
    fraction: float
    # Seconds left, extrapolated from the pace so far; None until there is a pace.
    eta_s: float | None

    def as_dict(self) -> dict[str, object]:
        return {"stage": self.stage.value, "fraction": round(self.fraction, 4),
                "eta_s": None if self.eta_s is None else round(self.eta_s, 1)}


def estimate(stage: Stage, done: int, total: int, elapsed_s: float) -> Progress:
    """Fraction of the whole job done (``done`` of ``total`` within ``stage``) and
    the time left at the pace so far."""
    low, high = STAGE_SPANS[stage]
    fraction = min(1.0, low + (high - low) * (done / total if total else 0.0))
    eta = elapsed_s * (1 - fraction) / fraction if fraction > 0 else None
    return Progress(stage, fraction, eta)
