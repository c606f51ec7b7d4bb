"""Self-healing's store: its switches and thresholds (one row), and every anomaly it saw."""
from __future__ import annotations

from django.db import models

from healing.core import OPEN_STATES, AnomalyState, AnomalyType, Mode


OPEN = sorted(s.value for s in OPEN_STATES)


def _choices(enum: type) -> list[tuple[str, str]]:
    return [(member.value, member.value) for member in enum]


class HealingConfig(models.Model):
    """A single row: the mode, the settings changed from their defaults, and the detector's
    memory between runs (which LRS members it saw last, each SPU's recent LRS shrinks)."""

    SINGLETON = 1
    id = models.PositiveSmallIntegerField(primary_key=True, default=SINGLETON)
    mode = models.CharField(max_length=16, choices=_choices(Mode), default=Mode.OFF.value)
    values = models.JSONField(default=dict, blank=True, help_text="settings set by name")
    # Names the last write of the LRS members last seen (``LrsMembers``): a process keeps
    # the set it last decoded by it (300,000 pairs at 100,000 partitions; decoding them
    # every check cost a second).
    in_lrs_version = models.PositiveBigIntegerField(default=0)
    shrinks = models.JSONField(default=dict, blank=True)
    # Why the last run did not plan (an operator's plan runs, the hourly bound), or "".
    waiting = models.TextField(blank=True, default="")
    checked_at = models.DateTimeField(null=True, blank=True)
    # The last pre-emption: self-healing's plan an operator's apply cancelled, the operator's
    # plan, and until when self-healing waits for it to start (healing/preemption.py).
    preempted_plan = models.BigIntegerField(null=True, blank=True)
    held_for = models.BigIntegerField(null=True, blank=True)
    held_until = models.DateTimeField(null=True, blank=True)
    # One detection run at a time (beat, `healing check`, two workers): the run that set
    # run_token holds the run until run_until (a crashed run's claim lapses).
    run_token = models.CharField(max_length=32, blank=True, default="")
    run_until = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"self-healing: {self.mode}"


class LrsMembers(models.Model):
    """The detector's memory of which SPUs were LRS members of which partition (a single
    row, healing/members.py), apart from the config row: SQLite writes a row whole at any
    update, and the config row is updated twice a check (its claim and its outcome), which
    with 540,000 pairs in it (9 MB at 180,000 partitions) cost 60 ms each."""

    SINGLETON = 1
    id = models.PositiveSmallIntegerField(primary_key=True, default=SINGLETON)
    # The config row's ``in_lrs_version`` these are. Before the packed columns: SQLite reads
    # a row's later columns through the earlier ones' overflow pages.
    version = models.PositiveBigIntegerField(default=0)
    # A base: one msgpack array of (topic, partition, SPU) arrays.
    packed = models.BinaryField(default=b"", blank=True)
    # The pairs added to and removed from the base since it was written (msgpack: two
    # arrays): a run that changed some members writes these, not the whole base.
    changes = models.BinaryField(default=b"", blank=True)


class Anomaly(models.Model):
    """One anomaly from detection to its outcome; ``plan`` is the plan that fixes it."""

    type = models.CharField(max_length=24, choices=_choices(AnomalyType), db_index=True)
    subject = models.CharField(max_length=64)
    state = models.CharField(max_length=16, choices=_choices(AnomalyState), db_index=True)
    detail = models.TextField(blank=True, default="")
    spus = models.JSONField(default=list, blank=True)
    detected_at = models.DateTimeField()
    alerted_at = models.DateTimeField(null=True, blank=True)
    planned_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    plan = models.ForeignKey("planner.Plan", null=True, blank=True, on_delete=models.SET_NULL,
                             related_name="anomalies")
    plans = models.PositiveIntegerField(default=0, help_text="plans made for it")
    preempted_by = models.ForeignKey("planner.Plan", null=True, blank=True,
                                     on_delete=models.SET_NULL, related_name="preempted_anomalies",
                                     help_text="the operator's plan its plan made way for")

    class Meta:
        ordering = ["-detected_at", "-id"]
        verbose_name_plural = "anomalies"
        # One open anomaly per condition, whatever runs race: a second insert fails.
        constraints = [models.UniqueConstraint(
            fields=["type", "subject"], condition=models.Q(state__in=OPEN),
            name="one_open_anomaly_per_subject")]

    def __str__(self) -> str:
        return f"{self.type} {self.subject}: {self.state}"
