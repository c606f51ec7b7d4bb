"""Snapshots of the replayed cluster: where a moment's replay starts (never offset 0)."""
from __future__ import annotations

from django.db import models


class Snapshot(models.Model):
    """The fold of the metadata log up to ``offset`` (history/core/replay.py, ``encode``)."""
    offset = models.BigIntegerField(unique=True)
    at = models.BigIntegerField(db_index=True, help_text="epoch ms of the entry at offset")
    taken = models.DateTimeField(auto_now_add=True)
    partitions = models.IntegerField(default=0)
    data = models.BinaryField()

    class Meta:
        ordering = ["offset"]

    def __str__(self) -> str:
        return f"snapshot at offset {self.offset}"
