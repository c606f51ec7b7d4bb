"""Stored plans: a scenario, its options, the moves, the target and the metrics."""
from __future__ import annotations

from django.db import models
from django.utils import timezone

from planner.core.jobs import GridState, PlanState
from planner.core.execution import ExecutionState


class Tracked(models.Model):
    """A computation the workbench runs: its state, progress and why it stopped."""

    progress = models.JSONField(default=dict, help_text="stage, fraction, eta_s")
    reason = models.TextField(blank=True, default="")
    task_id = models.CharField(max_length=64, blank=True, default="")

    class Meta:
        abstract = True


class Plan(Tracked):
    class Source(models.TextChoices):
        STORE = "store", "cluster store"
        KAFKA_JSON = "kafka-json", "Kafka reassignment JSON"
        DRAIN = "drain", "drain of one SPU"
        KAFKA_IMPORT = "kafka-import", "cluster import --plan-only snapshot"

    class Engine(models.TextChoices):
        LOCAL = "local"
        SPARK = "spark"

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    created_by = models.CharField(max_length=150)
    name = models.CharField(max_length=200)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.STORE)
    engine = models.CharField(max_length=8, choices=Engine.choices, default=Engine.LOCAL)
    scenario = models.JSONField()
    options = models.JSONField()
    metrics = models.JSONField()
    before = models.JSONField(default=dict)
    moves = models.JSONField(default=list)
    target = models.JSONField(default=dict)
    current = models.JSONField(default=dict, help_text="the layout the plan started from")
    elapsed_ms = models.PositiveIntegerField(default=0)
    # The computation's state (computing, pending, failed); once applied, the plan's
    # PlanExecution holds the execution's state and counts.
    state = models.CharField(max_length=16, default=PlanState.PENDING.value, db_index=True,
                             choices=[(s.value, s.value) for s in PlanState])

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"plan {self.pk}: {self.name}"


class PlanGrid(Tracked):
    """A grid of scenarios: one row of metrics per scenario, with Kafka's baseline."""

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    created_by = models.CharField(max_length=150)
    engine = models.CharField(max_length=8, choices=Plan.Engine.choices, default=Plan.Engine.LOCAL)
    state = models.CharField(max_length=16, default=GridState.COMPUTING.value,
                             choices=[(s.value, s.value) for s in GridState])
    options = models.JSONField()
    scenarios = models.JSONField(help_text="scenario dicts, in row order")
    rows = models.JSONField(default=list)
    elapsed_ms = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"grid {self.pk}: {len(self.scenarios)} scenarios"


class PlanExecution(models.Model):
    """A plan being carried out (planner/execution.py); at most one per plan."""

    plan = models.OneToOneField(Plan, on_delete=models.CASCADE, related_name="execution")
    state = models.CharField(max_length=16, choices=[(s.value, s.value) for s in ExecutionState],
                             default=ExecutionState.PENDING.value)
    max_moves_per_spu = models.PositiveIntegerField(default=5)
    max_moves = models.PositiveIntegerField(default=50)
    moves_total = models.PositiveIntegerField(default=0)
    moves_done = models.PositiveIntegerField(default=0)
    moves_failed = models.PositiveIntegerField(default=0)
    bytes_moved = models.BigIntegerField(default=0)
    # Indexes into plan.moves: every move handed to the replication core, and those not ended.
    started = models.JSONField(default=list)
    in_flight = models.JSONField(default=list)
    # Index (as text: JSON keys) of each move that reached its target -> bytes copied to each
    # of its new replicas; per-SPU progress and each move's outcome are read from it.
    landed = models.JSONField(default=dict)
    # Index (as text) of each move that waits on something it cannot do by itself (an SPU
    # offline, a cut, no leader) -> [what, as the replication core says it
    # (``reassign.waiting_on``), since when in ms]: a move in flight that then times out
    # fails with that reason; one not started, past the move timeout (planner/executor.py).
    waiting = models.JSONField(default=dict, blank=True)
    cancel_sent = models.BooleanField(default=False)
    # Bytes per second the plan's copies may start at (None: only the move counts throttle),
    # and its token bucket (planner/core/execution/throttle.py): tokens left as of throttle_at_ms.
    throttle_bytes_per_s = models.PositiveBigIntegerField(null=True, blank=True)
    throttle_tokens = models.FloatField(default=0)
    throttle_at_ms = models.BigIntegerField(default=0)
    # Bytes copied so far: landed moves, plus what the new replicas of moves in flight hold.
    bytes_copied = models.BigIntegerField(default=0)
    # The smoothed pace (planner/core/execution/pace.py, ``Pace``): sampled by the executor
    # when its counts change; the estimated finish is read from it, not from the average.
    pace = models.JSONField(default=dict, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True, default="")
    created_by = models.CharField(max_length=150, blank=True, default="")

    class Meta:
        # One plan carried out at a time, decided by the database: of two applies racing,
        # the second insert fails, whatever each read before (finished_at is set on ending).
        constraints = [models.UniqueConstraint(models.Value(1),
                                               condition=models.Q(finished_at__isnull=True),
                                               name="one_plan_carried_out_at_a_time")]

    def __str__(self) -> str:
        return f"execution of plan {self.plan_id}: {self.state}"

    @property
    def duration_s(self) -> float | None:
        """Start to finish, or to now while it runs (pauses included)."""
        if self.started_at is None:
            return None
        return round(((self.finished_at or timezone.now()) - self.started_at).total_seconds(), 3)


class ClusterImport(models.Model):
    """A cluster read from Kafka's tool outputs (``cluster import``): the planning
    snapshot a ``--plan-only`` import keeps, and the sizes and disk capacities a store
    import brings that the store has no column for (planner/imports.py)."""

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    created_by = models.CharField(max_length=150, blank=True, default="")
    # Whether the SPUs and topics were also loaded into the store.
    stored = models.BooleanField(default=False)
    files = models.JSONField(default=dict, help_text="which file each part came from")
    current = models.JSONField(help_text="the cluster, planner.core.serial's shape")
    min_insync = models.JSONField(default=dict, help_text="topic -> min.insync.replicas")
    capacities = models.JSONField(default=dict, help_text="SPU id (text) -> disk bytes")
    # Kafka's topic name -> the store's, where the store's naming rules renamed it.
    renamed = models.JSONField(default=dict)
    warnings = models.JSONField(default=list)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"import {self.pk}{' (stored)' if self.stored else ''}"
