"""Self-healing use cases: switch it, set its thresholds, and run one detection (the beat's).

``healing_check`` is one run of the anomaly detector: it reads the store
(healing/snapshot.py), lets the core decide (healing/core), and writes what
changed. Every automatic action (an anomaly's new state, a plan made) is an event
with the actor ``self-healing`` and an entry of the metadata log: the run writes its
rows in its own transaction, then appends those events through one unit of work of the
engine (healing/journal.py); a plan it applies is the planner's ``plan-control`` intent.
"""
from __future__ import annotations

import time
import uuid
from functools import partial
from datetime import datetime, timedelta, timezone as tz
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q, Sum
from django.utils import timezone

from cluster.errors import Conflict, InvalidInput
from cluster.core.replication import intents
from cluster.services.events import Actor, record_intent
from healing import core
from healing.core import Anomaly as Found
from healing.core import AnomalyState, AnomalyType, Mode
from healing.intents import MODE
from healing.journal import Journal
from healing.members import last_seen, members_now, remember
from healing.models import Anomaly, HealingConfig
from healing.plans import ACTOR, active_execution, apply_fix, outcome_of, store_fix
from healing.preemption import Hold, held_by, hold_of
from healing.selectors import history_fields
from healing.snapshot import cluster_snapshot, derived, spus_down_since
from planner.core import PlanError

# The members the last run saw, those now, and the change between them (healing/members.py).
Members = tuple[core.InLrs, core.InLrs, core.LrsChange]


def config() -> HealingConfig:
    return HealingConfig.objects.get_or_create(pk=HealingConfig.SINGLETON)[0]


def current_settings(row: HealingConfig | None = None) -> core.Settings:
    return core.settings_from((row or config()).values)


# ---- the operator's switches ---------------------------------------------------------

def healing_enable(*, notify_only: bool = False, by: Actor = None) -> HealingConfig:
    mode = Mode.NOTIFY_ONLY if notify_only else Mode.HEAL
    return _set_mode(mode, by)


def healing_disable(*, by: Actor = None) -> HealingConfig:
    return _set_mode(Mode.OFF, by)


def _set_mode(mode: Mode, by: Actor) -> HealingConfig:
    """Log first (issue 32): the ``healing-set`` intent, whose projection (healing/intents.py)
    writes the row once the store caught up with it; a switch to the mode it is in logs
    nothing."""
    if config().mode != mode.value:
        record_intent(by, intents.healing_set(MODE, mode.value))
    return config()


def healing_set(*, name: str, value: str, by: Actor = None) -> core.Settings:
    """``healing set NAME VALUE``: a bad name or value is refused, nothing logged or stored;
    a good one is a ``healing-set`` intent, logged first, whose projection stores it."""
    try:
        typed = core.parse_setting(name, value)
        core.check_thresholds(core.settings_from({**config().values, name: typed}))
    except core.SettingError as exc:
        raise InvalidInput(str(exc), field="value" if name in core.SETTING_NAMES else "name") \
            from None
    record_intent(by, intents.healing_set(name, typed))
    return current_settings()


# ---- one detection run (the beat's task) ------------------------------------------------

def _ms(moment: datetime | None) -> int | None:
    return None if moment is None else int(moment.timestamp() * 1000)


def _at(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=tz.utc)


def as_core(row: Anomaly) -> Found:
    return Found(AnomalyType(row.type), row.subject, AnomalyState(row.state),
                 _ms(row.detected_at), row.detail, tuple(row.spus), _ms(row.alerted_at),
                 row.plan_id, row.pk, row.preempted_by_id)


# A run that crashed keeps others out this long at most.
RUN_LEASE_S = 60.0


def healing_check(*, now_ms: int | None = None) -> dict[str, Any]:
    """Detect, follow every anomaly through its states, and plan (and apply) the next fix.

    One run at a time (the beat, ``healing check``, a second worker): a run that finds
    another under way does nothing and says so."""
    token = _claim_run()
    if token is None:
        row = config()
        return {"mode": row.mode, "anomalies": Anomaly.objects.filter(
                    state__in=[s.value for s in core.OPEN_STATES]).count(),
                "waiting": "another detection run is under way", "planned": None,
                "skipped": True}
    try:
        return _check(now_ms if now_ms is not None else int(time.time() * 1000))
    finally:
        HealingConfig.objects.filter(pk=HealingConfig.SINGLETON, run_token=token) \
            .update(run_token="", run_until=None)


def _claim_run() -> str | None:
    """One conditional update decides between runs racing (no lock held during the run: the
    run takes the engine's lease, and a row lock taken before it could deadlock a tick)."""
    config()
    now, token = timezone.now(), uuid.uuid4().hex
    won = HealingConfig.objects.filter(pk=HealingConfig.SINGLETON) \
        .filter(Q(run_until__isnull=True) | Q(run_until__lt=now)) \
        .update(run_token=token, run_until=now + timedelta(seconds=RUN_LEASE_S))
    return token if won else None


def _check(now: int) -> dict[str, Any]:
    row, snapshot = config(), cluster_snapshot(now)
    settings, mode = current_settings(row), Mode(row.mode)
    seen = last_seen(row)
    members, change = members_now(snapshot, seen)
    fresh = core.shrinks_of(change[0], snapshot)
    shrinks = core.shrinks_in_window({int(k): v for k, v in row.shrinks.items()}, fresh, now,
                                     settings.slow_spu_window_s, spus_down_since(row.checked_at))
    slow = tuple((s, len(t)) for s, t in shrinks.items())
    counts = derived(snapshot, "tally", core.tally_basis(snapshot.spus),
                     lambda: core.tally(snapshot.partitions, snapshot.spus),
                     lambda tally, moved: core.tally_moved(tally, snapshot.spus, moved))
    findings = list(derived(snapshot, "detect", (snapshot.spus, settings, slow),
                            lambda: tuple(core.detect(snapshot, settings, slow, counts))))
    present = {(f.type.value, f.subject) for f in findings}
    open_rows = list(Anomaly.objects.filter(state__in=[s.value for s in core.OPEN_STATES]))
    hold = hold_of(row, now)
    current = [_with_plan_outcome(a, a.key in present, hold) for a in map(as_core, open_rows)]
    anomalies = core.advance(current, findings, now, settings)
    waiting, planned = _next_fix(anomalies, snapshot, settings, mode, now, hold)
    journal = Journal()
    write = partial(_write, journal, row, open_rows, anomalies, planned, waiting, shrinks,
                    snapshot, mode, settings, (seen, members, change))
    out = write()
    # Once the rows committed, and only when they changed (a quiet run logs nothing and
    # never waits for the engine's lease).
    journal.log()
    return out


def _with_plan_outcome(anomaly: Found, still_there: bool, hold: Hold) -> Found:
    if anomaly.state is AnomalyState.PREEMPTED:
        return core.resume(anomaly, hold.active)
    preempted = core.preempt(anomaly, hold.preempted_plan, hold.held_for)
    if preempted.state is AnomalyState.PREEMPTED:  # its plan's cancel is no failure
        return preempted
    outcome, reason = outcome_of(anomaly.plan_id)
    return core.plan_ended(anomaly, outcome, still_there, reason)


def _held(hold: Hold) -> str:
    return (f"an operator's plan ({hold.held_for}) pre-empted self-healing's plan "
            f"({hold.preempted_plan}); self-healing plans again once it ended")


def _next_fix(anomalies: list[Found], snapshot: core.Snapshot, settings: core.Settings,
              mode: Mode, now: int,
              hold: Hold) -> tuple[str, tuple[list[Found], core.Fix] | None]:
    """Why nothing is planned now, or the anomalies the next plan fixes and its moves."""
    if hold.active and mode is not Mode.OFF:
        return _held(hold), None
    chosen = core.due(anomalies, now, settings, mode)
    if not chosen:
        return "", None
    running = active_execution()
    if running is not None:
        whose = "a self-healing" if running.plan.created_by == ACTOR else "an operator's"
        return f"{whose} plan ({running.plan_id}) is being carried out", None
    budget = core.moves_allowed(settings, moves_last_hour())
    if budget == 0:
        return f"the bound of {settings.moves_per_hour} moves per hour is reached", None
    try:
        fix = core.plan_fix(chosen[0].type, snapshot, [s for a in chosen for s in a.spus], budget)
    except PlanError as exc:  # e.g. no SPU left to take a replica: said, retried next run
        return f"no plan can fix {chosen[0].type.value} now: {exc}", None
    if not fix.moves:
        quiet = chosen[0].type is AnomalyType.SLOW_SPU  # it leads nothing: nothing to do
        return "" if quiet else f"no move can fix {chosen[0].type.value} now", None
    return "", (chosen, fix)


def moves_last_hour() -> int:
    since = timezone.now() - timedelta(hours=1)
    from planner.models import PlanExecution

    return PlanExecution.objects.filter(plan__created_by=ACTOR, started_at__gte=since) \
        .aggregate(n=Sum("moves_total"))["n"] or 0


def _write(journal: Journal, row: HealingConfig, open_rows: list[Anomaly],
           anomalies: list[Found], planned: tuple[list[Found], core.Fix] | None, waiting: str,
           shrinks: dict[int, list[int]], snapshot: core.Snapshot, mode: Mode,
           settings: core.Settings, members: Members
           ) -> dict[str, Any]:
    """The plan stored, then applied (its ``plan-control`` intent logged first, outside any
    transaction), then the anomalies and the run's row as the apply left them."""
    planned, waiting, plan = _store_plan(journal, row, planned, waiting, snapshot, mode)
    if planned is not None and plan is not None:
        chosen = planned[0]
        applied, waiting = _apply(plan, settings) if mode is Mode.HEAL else (False, waiting)
        keys, as_mode = {a.key for a in chosen}, Mode.HEAL if applied else Mode.NOTIFY_ONLY
        anomalies = [core.planned(a, plan.pk, as_mode) if a.key in keys else a
                     for a in anomalies]
    _save_run(journal, row, open_rows, anomalies, waiting, shrinks, snapshot, members)
    return {"mode": mode.value, "anomalies": len(anomalies), "waiting": waiting,
            "planned": planned[1].name if planned else None}


@transaction.atomic
def _store_plan(journal: Journal, row: HealingConfig,
                planned: tuple[list[Found], core.Fix] | None, waiting: str,
                snapshot: core.Snapshot, mode: Mode
                ) -> tuple[tuple[list[Found], core.Fix] | None, str, Any]:
    """The next fix as a stored plan, unless an operator's plan holds self-healing back."""
    if planned is not None and mode is Mode.HEAL:
        # An operator's apply may have pre-empted since the run read the hold: under the row's
        # lock, it either waits for this check or is seen by it (and one that comes after
        # finds this run's plan applied, or refuses it: one plan at a time).
        hold = held_by(row, snapshot.at_ms)
        if hold.active:
            return None, _held(hold), None
    if planned is None:
        return None, waiting, None
    return planned, waiting, store_fix(planned[1], planned[0], journal)


@transaction.atomic
def _save_run(journal: Journal, row: HealingConfig, open_rows: list[Anomaly],
              anomalies: list[Found], waiting: str, shrinks: dict[int, list[int]],
              snapshot: core.Snapshot, members: Members) -> None:
    before = {r.pk: r for r in open_rows}
    for anomaly in anomalies:
        _save(anomaly, before.get(anomaly.id), snapshot.at_ms, journal)
    fields = ["shrinks", "waiting", "checked_at", "updated_at"]
    remember(row, *members, fields)  # hundreds of thousands of pairs: what changed only
    row.shrinks = {str(k): v for k, v in shrinks.items()}
    row.waiting, row.checked_at = waiting, _at(snapshot.at_ms)
    row.save(update_fields=fields)


def _apply(plan: Any, settings: core.Settings) -> tuple[bool, str]:
    """Apply the plan (logged first: no transaction is open here, unless a caller's); an
    operator's apply that won the race leaves it planned (next run plans afresh). A process
    that dies before the anomalies are saved leaves the plan running unlinked: the next run
    waits for it (a self-healing plan is being carried out), then sees what it fixed."""
    try:
        apply_fix(plan, settings)
    except Conflict as exc:
        return False, str(exc)
    return True, ""


def _save(a: Found, old: Anomaly | None, now_ms: int, journal: Journal) -> None:
    state_changed = old is None or old.state != a.state.value
    if old is None:
        old = Anomaly(type=a.type.value, subject=a.subject, detected_at=_at(a.detected_ms))
    elif not state_changed and old.detail == a.detail and old.plan_id == a.plan_id:
        return
    if a.plan_id is not None and a.plan_id != old.plan_id:
        old.planned_at, old.plans = _at(now_ms), old.plans + 1
    old.state, old.detail, old.spus, old.plan_id = a.state.value, a.detail, list(a.spus), a.plan_id
    old.alerted_at, old.preempted_by_id = _at(a.alerted_ms), a.preempted_by
    if a.state not in core.OPEN_STATES:
        old.finished_at = _at(now_ms)
    if not _saved(old):
        return
    if state_changed:
        # The row as the page shows it travels in the event: the page patches itself with it
        # (a closed one with its History columns: it moves there without a reload).
        params = {"type": a.type.value, "subject": a.subject, "plan": a.plan_id,
                  "preempted_by": a.preempted_by, "detected_at": old.detected_at.isoformat()}
        if a.state not in core.OPEN_STATES:
            params.update(history_fields(old))
        journal.event(ACTOR, "anomaly", old.pk, a.state.value, params, result=a.detail)


def _saved(row: Anomaly) -> bool:
    """False for a new anomaly another run opened first (one open per condition: the
    database's constraint decides, whatever the runs read)."""
    if row.pk is not None:
        row.save()
        return True
    try:
        with transaction.atomic():
            row.save()
    except IntegrityError:
        return False
    return True
