"""Stored plans: a scenario, its options, the moves, the target and the metrics."""
from __future__ import annotations

from django.db import models


class Plan(models.Model):
    class Source(models.TextChoices):
        STORE = "store", "cluster store"
        KAFKA_JSON = "kafka-json", "Kafka reassignment JSON"

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

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"plan {self.pk}: {self.name}"
