"""The store: the SC's key-value objects, spec and status kept apart (003).

Only services write these rows; controllers decide, services persist.
"""
from __future__ import annotations

import uuid

from django.db import models

from cluster.core.replication.state import Resolution as PartitionResolution
from cluster.core.spu_groups import GroupResolution
from cluster.core.spus import SpuResolution, SpuType
from cluster.core.topic_controller import TopicResolution


def _choices(enum: type) -> list[tuple[str, str]]:
    return [(member.value, member.value) for member in enum]


class SpuGroup(models.Model):
    # spec
    name = models.CharField(max_length=63, unique=True)
    replicas = models.PositiveIntegerField()
    min_id = models.PositiveIntegerField()
    rack = models.CharField(max_length=63, blank=True, default="")
    storage_size = models.CharField(max_length=16, default="1Gi")
    # status
    resolution = models.CharField(max_length=16, choices=_choices(GroupResolution),
                                  default=GroupResolution.INIT.value)
    reason = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "SPU group"

    def __str__(self) -> str:
        return self.name


class Spu(models.Model):
    # spec: the SPU id is the primary key because 003 makes it globally unique.
    id = models.PositiveIntegerField(primary_key=True)
    spu_type = models.CharField(max_length=8, choices=_choices(SpuType),
                                default=SpuType.CUSTOM.value)
    rack = models.CharField(max_length=63, blank=True, default="")
    public_endpoint = models.CharField(max_length=255, blank=True, default="")
    private_endpoint = models.CharField(max_length=255, blank=True, default="")
    group = models.ForeignKey(SpuGroup, null=True, blank=True,
                              on_delete=models.CASCADE, related_name="spus")
    # status
    resolution = models.CharField(max_length=8, choices=_choices(SpuResolution),
                                  default=SpuResolution.INIT.value)
    last_heartbeat = models.DateTimeField(null=True, blank=True)
    registered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name = "SPU"

    def __str__(self) -> str:
        return f"SPU {self.id}"


class Topic(models.Model):
    # spec
    name = models.CharField(max_length=63, unique=True)
    partitions = models.PositiveIntegerField()
    replication_factor = models.PositiveIntegerField()
    ignore_rack_assignment = models.BooleanField(default=False)
    manual_replica_map = models.JSONField(null=True, blank=True)
    min_lrs = models.PositiveIntegerField(default=1)
    max_lag = models.PositiveIntegerField(default=1000)
    # Kafka's unclean.leader.election.enable: availability over committed records.
    unclean_leader_election = models.BooleanField(default=False)
    # Records per second the simulated producer appends (0: none), spread over partitions.
    producer_rate = models.FloatField(default=0.0)
    # status
    resolution = models.CharField(max_length=24, choices=_choices(TopicResolution),
                                  default=TopicResolution.INIT.value)
    reason = models.TextField(blank=True, default="")
    replica_map = models.JSONField(default=list, blank=True)
    assignment_start = models.IntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def is_manual(self) -> bool:
        return self.manual_replica_map is not None


class Partition(models.Model):
    """One row of a topic's replica map; 003's Partition object."""

    # No index of its own: the unique (topic, index) index serves lookups by topic, and one
    # index fewer to maintain is a tenth of a 100,000-partition topic's creation.
    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="partition_set",
                              db_index=False)
    index = models.PositiveIntegerField()
    # spec
    replicas = models.JSONField()
    initial_leader = models.PositiveIntegerField()
    # status (driven by the replication engine)
    leader = models.PositiveIntegerField(null=True, blank=True)
    lrs = models.JSONField(default=list, blank=True)
    resolution = models.CharField(max_length=16, choices=_choices(PartitionResolution),
                                  default=PartitionResolution.OFFLINE.value)
    hw = models.BigIntegerField(default=0)
    leo = models.BigIntegerField(default=0)
    # [{"spu", "leo", "hw"}] per replica, as `fluvio partition list` shows them.
    replica_status = models.JSONField(default=list, blank=True)
    # The leader epoch of the metadata log (a new leader, clean or unclean, bumps it).
    epoch = models.PositiveIntegerField(default=0)
    # The fence token of the unit of work that last wrote this row's status: a holder
    # paused between its Redis commit and this write can never pull the row back.
    written_by = models.BigIntegerField(default=0)
    # The offsets the hot state may give out without touching this row: a unit of work
    # whose LEO would pass it raises it first (engine/mirror.py), and a Redis loss restores
    # each partition to max(hw, reserved_to), so no offset is given out twice.
    reserved_to = models.BigIntegerField(default=0, db_default=0)

    class Meta:
        ordering = ["topic__name", "index"]
        constraints = [models.UniqueConstraint(fields=["topic", "index"],
                                               name="unique_partition_per_topic")]

    def __str__(self) -> str:
        return f"{self.topic.name}/{self.index}"


class ClusterState(models.Model):
    """A single row: the chaining cursor of computed assignment (DESIGN.md)."""

    SINGLETON = 1
    id = models.PositiveSmallIntegerField(primary_key=True, default=SINGLETON)
    assignment_cursor = models.BigIntegerField(default=0)
    # Names this store; state kept elsewhere (Redis) for another store is discarded.
    store_id = models.UUIDField(default=uuid.uuid4, editable=False)
    # The last metadata-log offset the store's projection applied (cluster/projections/).
    applied_offset = models.BigIntegerField(default=0)
    # Which Redis holds this store's hot state: its URL (password left out) and the
    # marker written in the namespace when it was claimed (store_identity.py).
    redis_url = models.CharField(max_length=512, blank=True, default="")
    redis_marker = models.CharField(max_length=64, blank=True, default="")
    # Where this database lives (engine and name), so a copy is told apart from its original.
    database_identity = models.CharField(max_length=512, blank=True, default="")
    # The demo cluster is loaded once per store: what an operator removes stays removed.
    demo_loaded = models.BooleanField(default=False)

    class Meta:
        verbose_name = "cluster state"
        # Operators hold this; viewers do not (cluster/roles.py).
        permissions = [("operate_cluster", "Can change the cluster: topics, SPUs, outages, plans")]


class Event(models.Model):
    """Append-only audit log: what changed, when, by whom or which controller."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.CharField(max_length=150)
    object_type = models.CharField(max_length=32, db_index=True)
    object_name = models.CharField(max_length=255, db_index=True)
    operation = models.CharField(max_length=64)
    params = models.JSONField(default=dict, blank=True)
    result = models.TextField(blank=True, default="")
    # The metadata-log entry this event projects (None for events logged directly).
    log_offset = models.BigIntegerField(null=True, blank=True, unique=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"{self.at:%Y-%m-%d %H:%M:%S} {self.actor} {self.operation} {self.object_name}"

    def save(self, *args: object, **kwargs: object) -> None:
        if self.pk is not None:
            raise ValueError("events are append-only")
        super().save(*args, **kwargs)  # type: ignore[arg-type]


class TopicSpuCount(models.Model):
    """Partition counts per topic (``spu`` -1) and per (topic, SPU): a projection of the
    partition rows kept by cluster/projections/aggregates.py, so pages read a few
    thousand counts instead of every partition (cluster/core/tally.py says what counts)."""

    topic = models.ForeignKey(Topic, on_delete=models.CASCADE, related_name="+")
    spu = models.IntegerField()
    partitions = models.IntegerField(default=0)
    leaderless = models.IntegerField(default=0)
    under_replicated = models.IntegerField(default=0)
    replicas = models.IntegerField(default=0)
    leaders = models.IntegerField(default=0)
    preferred = models.IntegerField(default=0)
    preferred_leading = models.IntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["topic", "spu"],
                                               name="unique_count_per_topic_spu")]


class FailoverCount(models.Model):
    """Leaders ``taker`` (-1: nobody) would inherit if ``failed`` went down, cluster-wide:
    the same projection as TopicSpuCount."""

    failed = models.IntegerField()
    taker = models.IntegerField()
    partitions = models.IntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["failed", "taker"],
                                               name="unique_failover_move")]


class TickHealth(models.Model):
    """A single row: the replication ticks the workers' task shell saw fail (issue 35).

    In the database, not in Redis: a Redis that refuses writes is one way ticks fail.
    A tick that commits is noted in Redis instead (cluster/services/tick_health.py), once
    a tick, where it costs no database write."""

    SINGLETON = 1
    id = models.PositiveSmallIntegerField(primary_key=True, default=SINGLETON)
    failures = models.BigIntegerField(default=0)  # ever, for /metrics' counter
    # Failures in a row: since the last commit seen when the latest one was recorded.
    streak = models.IntegerField(default=0)
    last_failure_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True, default="")
