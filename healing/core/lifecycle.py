"""How an anomaly moves through its states, one detection run at a time.

    detected --(alert threshold)--> alerting --(heal threshold)--> due for a plan
    due: notify-only -> planned (the dry run, nothing applied); heal -> applying
    applying --(plan done, condition gone)--> healed
    applying --(plan done, condition still there: the hourly budget cut it)--> alerting
    applying --(plan cancelled or failed)--> failed
    applying --(an operator's apply cancelled its plan to make way)--> preempted
    preempted --(the operator's plan ended)--> alerting: planned afresh from the cluster as it is
    detected / alerting / planned --(condition gone by itself)--> cancelled: nothing moved

Cruise Control's two thresholds (``broker.failure.alert.threshold.ms``,
``self.healing.threshold.ms``) are the SPU-down anomaly's; the other kinds
alert at once and are fixed once they lasted ``fix_after_s`` (a flapping
figure is not worth a plan). A slow SPU is only reported unless
``slow_spu_move_leaders`` is on: then its leaderships move away.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from healing.core.model import (OPEN_STATES, PRIORITY, Anomaly, AnomalyState, AnomalyType,
                                Finding, Mode, Settings)

S = AnomalyState


def alert_after_ms(kind: AnomalyType, settings: Settings) -> int:
    return int(settings.spu_down_alert_after_s * 1000) if kind is AnomalyType.SPU_DOWN else 0


def fix_after_ms(kind: AnomalyType, settings: Settings) -> int:
    if kind is AnomalyType.SPU_DOWN:
        return int(settings.spu_down_heal_after_s * 1000)
    return int(settings.fix_after_s * 1000)


def advance(anomalies: Iterable[Anomaly], findings: Iterable[Finding], now_ms: int,
            settings: Settings) -> list[Anomaly]:
    """The open anomalies after one detection run, with the new ones (closed ones included,
    once, in the state they closed in)."""
    seen = {(f.type.value, f.subject): f for f in findings}
    result: list[Anomaly] = []
    for anomaly in anomalies:
        if anomaly.state not in OPEN_STATES:
            result.append(anomaly)  # closed by its plan's outcome on this run
            continue
        finding = seen.pop(anomaly.key, None)
        result.append(_still(anomaly, finding, now_ms, settings))
    for finding in seen.values():
        fresh = Anomaly(finding.type, finding.subject, S.DETECTED, now_ms, finding.detail,
                        finding.spus)
        result.append(_alert_if_due(fresh, now_ms, settings))
    return result


def _still(anomaly: Anomaly, finding: Finding | None, now_ms: int,
           settings: Settings) -> Anomaly:
    if finding is None:
        if anomaly.state is S.APPLYING:
            return anomaly  # its plan's outcome decides
        if anomaly.state is S.PREEMPTED:
            return anomaly.moved_to(S.CANCELLED, detail=f"{anomaly.detail}: gone after its plan "
                                    f"made way for the operator's plan {anomaly.preempted_by}")
        return anomaly.moved_to(S.CANCELLED, detail=f"{anomaly.detail}: cleared by itself, "
                                                    "nothing moved")
    updated = anomaly.moved_to(anomaly.state, detail=finding.detail, spus=finding.spus)
    return _alert_if_due(updated, now_ms, settings)


def _alert_if_due(anomaly: Anomaly, now_ms: int, settings: Settings) -> Anomaly:
    if anomaly.state is S.DETECTED and \
            now_ms - anomaly.detected_ms >= alert_after_ms(anomaly.type, settings):
        return anomaly.moved_to(S.ALERTING, alerted_ms=now_ms)
    return anomaly


def due(anomalies: Sequence[Anomaly], now_ms: int, settings: Settings,
        mode: Mode) -> list[Anomaly]:
    """The anomalies the next self-healing plan fixes: every SPU down past its threshold
    together (one drain of all of them), else the first due by priority."""
    if mode is Mode.OFF:
        return []
    ready = [a for a in anomalies if _ready(a, now_ms, settings, mode)]
    ready.sort(key=lambda a: (PRIORITY.index(a.type), a.detected_ms, a.subject))
    if not ready:
        return []
    if ready[0].type is AnomalyType.SPU_DOWN:
        return [a for a in ready if a.type is AnomalyType.SPU_DOWN]
    return ready[:1]


def _ready(a: Anomaly, now_ms: int, settings: Settings, mode: Mode) -> bool:
    if a.type is AnomalyType.SLOW_SPU and not settings.slow_spu_move_leaders:
        return False  # reported only
    if a.state is S.PLANNED:
        return mode is Mode.HEAL  # a dry run's plan may be stale: plan again, then apply
    return a.state is S.ALERTING and now_ms - a.detected_ms >= fix_after_ms(a.type, settings)


def planned(anomaly: Anomaly, plan_id: int, mode: Mode) -> Anomaly:
    return anomaly.moved_to(S.APPLYING if mode is Mode.HEAL else S.PLANNED, plan_id=plan_id)


def plan_ended(anomaly: Anomaly, outcome: str | None, still_there: bool,
               reason: str = "") -> Anomaly:
    """An applying anomaly once its plan's execution ended (``outcome`` None: still running)."""
    if anomaly.state is not S.APPLYING or outcome is None:
        return anomaly
    if outcome == "done":
        return anomaly.moved_to(S.ALERTING) if still_there else anomaly.moved_to(S.HEALED)
    return anomaly.moved_to(S.FAILED, detail=f"{anomaly.detail}: plan {anomaly.plan_id} "
                                             f"{outcome}{': ' + reason if reason else ''}")


def preempt(anomaly: Anomaly, preempted_plan: int | None, by_plan: int | None) -> Anomaly:
    """An applying anomaly whose plan an operator's apply cancelled (``preempted_plan``, made way
    for ``by_plan``) waits, rather than failing: its condition is still to be fixed."""
    if anomaly.state is not S.APPLYING or anomaly.plan_id is None \
            or anomaly.plan_id != preempted_plan:
        return anomaly
    return anomaly.moved_to(S.PREEMPTED, preempted_by=by_plan)


def resume(anomaly: Anomaly, held: bool) -> Anomaly:
    """Once the operator's plan ended (``held`` False) a pre-empted anomaly alerts again: the
    next plan is made from the cluster as it then is, not the cancelled one's leftovers."""
    if anomaly.state is not S.PREEMPTED or held:
        return anomaly
    return anomaly.moved_to(S.ALERTING)


def held(applied: bool, ended: bool, until_ms: int | None, now_ms: int) -> bool:
    """Whether self-healing still waits for the operator's plan that pre-empted its own: while
    that plan runs; before it started, until ``until_ms`` (the operator's apply waits for the
    moves in flight to end, and an operator whose apply was refused after all may plan again
    and apply; past it the hold lapses)."""
    if applied:
        return not ended
    return until_ms is not None and now_ms < until_ms


def moves_allowed(settings: Settings, used_last_hour: int) -> int:
    """Moves a new plan may hold under the hourly bound."""
    return max(0, settings.moves_per_hour - used_last_hour)
