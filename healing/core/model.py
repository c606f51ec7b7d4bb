"""Plain data of self-healing: what the detector reads, what it finds, what it tracks.

A ``Snapshot`` is the cluster as the store has it at one moment (SPUs with
their rack and whether they are up, partitions with their replicas, LRS and
the topic's factor). ``Finding`` is one condition seen in one snapshot; an
``Anomaly`` is a finding followed over time through its states.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import Any


class AnomalyType(StrEnum):
    SPU_DOWN = "spu_down"
    UNDER_REPLICATED = "under_replicated"
    RACK_SPREAD = "rack_spread"
    GOAL_VIOLATION = "goal_violation"
    SLOW_SPU = "slow_spu"


# Which fix goes first when several are due: lost replicas before spread before balance.
PRIORITY = (AnomalyType.SPU_DOWN, AnomalyType.UNDER_REPLICATED, AnomalyType.RACK_SPREAD,
            AnomalyType.GOAL_VIOLATION, AnomalyType.SLOW_SPU)


class AnomalyState(StrEnum):
    DETECTED = "detected"
    ALERTING = "alerting"
    PLANNED = "planned"
    APPLYING = "applying"
    # Its plan was cancelled to make way for an operator's: it waits for that plan to end.
    PREEMPTED = "preempted"
    HEALED = "healed"
    CANCELLED = "cancelled"
    FAILED = "failed"


OPEN_STATES = frozenset({AnomalyState.DETECTED, AnomalyState.ALERTING, AnomalyState.PLANNED,
                         AnomalyState.APPLYING, AnomalyState.PREEMPTED})


class Mode(StrEnum):
    """off: detect and alert only; notify-only: also plan (a dry run); heal: plan and apply."""
    OFF = "off"
    NOTIFY_ONLY = "notify-only"
    HEAL = "heal"


@dataclass(frozen=True)
class SpuView:
    id: int
    rack: str | None
    online: bool
    registered: bool = True


@dataclass(frozen=True)
class PartitionView:
    topic: str
    partition: int
    replicas: tuple[int, ...]
    lrs: tuple[int, ...]
    leader: int | None
    factor: int
    racks_apart: bool = True  # False for topics that ignore rack assignment


@dataclass(frozen=True)
class Snapshot:
    spus: tuple[SpuView, ...]
    partitions: tuple[PartitionView, ...]
    at_ms: int

    def spu(self, spu_id: int) -> SpuView | None:
        return next((s for s in self.spus if s.id == spu_id), None)


@dataclass(frozen=True)
class Finding:
    """One condition in one snapshot; ``subject`` names it (the same subject, the same anomaly)."""
    type: AnomalyType
    subject: str
    detail: str
    spus: tuple[int, ...] = ()
    count: int = 0


@dataclass(frozen=True)
class Anomaly:
    """A finding followed through time: when it was seen, alerted, planned, and its plan."""
    type: AnomalyType
    subject: str
    state: AnomalyState
    detected_ms: int
    detail: str = ""
    spus: tuple[int, ...] = ()
    alerted_ms: int | None = None
    plan_id: int | None = None
    id: int | None = None
    preempted_by: int | None = None  # the operator's plan its own plan made way for

    @property
    def key(self) -> tuple[str, str]:
        return (self.type.value, self.subject)

    def moved_to(self, state: AnomalyState, **changes: Any) -> Anomaly:
        return replace(self, state=state, **changes)


@dataclass(frozen=True)
class Settings:
    """The switches and thresholds (``healing set NAME VALUE``); defaults are Cruise Control's
    and Kafka's where they have one, shorter where a demo cluster is watched by people."""
    spu_down_enabled: bool = True
    spu_down_alert_after_s: float = 60.0
    spu_down_heal_after_s: float = 600.0
    under_replicated_enabled: bool = True
    rack_spread_enabled: bool = True
    # Off by default, as Redpanda's continuous balancing and Cruise Control's goal healing.
    goal_violation_enabled: bool = False
    leader_skew_percent: float = 10.0
    replica_skew_percent: float = 20.0
    slow_spu_enabled: bool = True
    slow_spu_shrinks: int = 3
    slow_spu_window_s: float = 300.0
    # The option: a slow SPU's preferred leaderships move to a replica in the LRS.
    slow_spu_move_leaders: bool = False
    # How long a spread, balance or topology anomaly must last before a plan fixes it.
    fix_after_s: float = 10.0
    moves_per_hour: int = 5000
    max_moves_per_spu: int = 5
    max_moves: int = 50
    throttle_bytes_per_s: int = 10 * 1024 * 1024

    def enabled(self, kind: AnomalyType) -> bool:
        return bool(getattr(self, f"{kind.value}_enabled"))

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


SETTING_NAMES = tuple(f.name for f in fields(Settings))


class SettingError(ValueError):
    """A setting name or value that cannot be taken (the message says why)."""


_TRUE, _FALSE = {"true", "on", "yes", "1"}, {"false", "off", "no", "0"}
# Bounds keep a typo from turning self-healing into a storm (or off without saying so).
_BOUNDS: dict[str, tuple[float, float]] = {
    "spu_down_alert_after_s": (0, 7 * 86400), "spu_down_heal_after_s": (0, 7 * 86400),
    "leader_skew_percent": (0, 1000), "replica_skew_percent": (0, 1000),
    "slow_spu_shrinks": (1, 1_000_000), "slow_spu_window_s": (1, 7 * 86400),
    "fix_after_s": (0, 86400), "moves_per_hour": (1, 10_000_000),
    "max_moves_per_spu": (1, 10_000), "max_moves": (1, 100_000),
    "throttle_bytes_per_s": (1, 2**40)}


def parse_setting(name: str, text: str) -> Any:
    """The typed value of ``healing set NAME VALUE``."""
    kinds = {f.name: f.type for f in fields(Settings)}
    if name not in kinds:
        raise SettingError(f"unknown setting {name!r}: one of {', '.join(SETTING_NAMES)}")
    kind, raw = kinds[name], str(text).strip().lower()
    if kind == "bool":
        if raw not in _TRUE | _FALSE:
            raise SettingError(f"{name} must be true or false, not {text!r}")
        return raw in _TRUE
    try:
        value: float | int = int(raw) if kind == "int" else float(raw)
    except ValueError:
        raise SettingError(f"{name} must be a{'n integer' if kind == 'int' else ' number'}, "
                           f"not {text!r}") from None
    low, high = _BOUNDS[name]
    if not low <= value <= high or value != value:
        raise SettingError(f"{name} must be {low:g} to {high:g}, not {text!r}")
    return value


def settings_from(values: dict[str, Any]) -> Settings:
    """Stored values over the defaults; an unknown or stale key is ignored."""
    known = {k: v for k, v in values.items() if k in SETTING_NAMES}
    return Settings(**known)


def check_thresholds(settings: Settings) -> None:
    if settings.spu_down_heal_after_s < settings.spu_down_alert_after_s:
        raise SettingError("spu_down_heal_after_s must not be below spu_down_alert_after_s")
