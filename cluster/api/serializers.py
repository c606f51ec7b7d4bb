"""API shapes: what each endpoint reads and answers (the OpenAPI schema comes from these)."""
from __future__ import annotations

import math
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer

from cluster.core.names import MAX_NAME_LENGTH, NAME_PATTERN
from cluster.core.replication.state import Resolution as PartitionResolution
from cluster.core.spu_groups import MAX_GROUP_REPLICAS, SIZE_PATTERN, GroupResolution
from cluster.core.spus import MAX_ENDPOINT_LENGTH, MAX_SPU_ID, SpuResolution
from cluster.core.topic_controller import (MAX_LAG, MAX_PARTITIONS, MAX_REPLICATION,
                                           TopicResolution)
from cluster.services.records import MAX_OFFSET


def _values(enum: type) -> list[str]:
    """The core's enum as the schema's choices: the one list of resolutions."""
    return [member.value for member in enum]  # type: ignore[attr-defined]


class ErrorSerializer(serializers.Serializer):
    error = serializers.CharField()
    details = serializers.JSONField(allow_null=True)
    field = serializers.CharField(required=False)


class PartitionMapEntrySerializer(serializers.Serializer):
    id = serializers.IntegerField(min_value=0)
    replicas = serializers.ListField(child=serializers.IntegerField())


class TopicSerializer(serializers.Serializer):
    """``topic describe --json`` plus the topic's settings."""
    name = serializers.CharField()
    resolution = serializers.ChoiceField(choices=_values(TopicResolution))
    reason = serializers.CharField(allow_blank=True)
    partitions = PartitionMapEntrySerializer(many=True)
    partition_count = serializers.IntegerField()
    replication = serializers.IntegerField()
    ignore_rack_assignment = serializers.BooleanField()
    min_lrs = serializers.IntegerField()
    max_lag = serializers.IntegerField()
    unclean_leader_election = serializers.BooleanField(
        help_text="Kafka's unclean.leader.election.enable for this topic")
    manual = serializers.BooleanField()


class TopicListItemSerializer(TopicSerializer):
    """A topic in ``GET /api/topics/``: the describe shape without the replica map unless
    ``?fields=`` names it; ``?fields=`` keeps only the keys it names."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            field.required = False


class UnderReplicatedStartSerializer(serializers.Serializer):
    partition = serializers.IntegerField()
    offline_spus = serializers.ListField(child=serializers.IntegerField())
    live_replicas = serializers.IntegerField()
    reason = serializers.CharField(help_text="why: its SPUs are registered but not online")


class TopicPreviewSerializer(TopicSerializer):
    """What a dry run answers: the topic it would store, and which partitions would start short."""
    warning = serializers.CharField(allow_blank=True,
                                    help_text="one sentence; empty when every replica is live")
    under_replicated = UnderReplicatedStartSerializer(many=True)


@extend_schema_field({"oneOf": [
    {"type": "object", "required": ["partitions"],
     "properties": {"partitions": {"type": "array",
                                   "items": {"$ref": "#/components/schemas/PartitionMapEntry"}}}},
    {"type": "array", "items": {"$ref": "#/components/schemas/PartitionMapEntry"}},
], "description": "A replica assignment file, either shape of DESIGN.md."})
class ReplicaAssignmentField(serializers.JSONField):
    """Passed to the service untouched: it checks every rule of 000 itself."""


def _shown(value: object) -> str:
    """What a client sent, in JSON's words."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the text {value[:20]!r}"
    if isinstance(value, (list, tuple)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return str(value)


class WholeNumberField(serializers.IntegerField):
    """An integer whose refusal says what came instead (true, "six", 1e+30), not only
    DRF's "A valid integer is required."; true is refused although int(True) works."""

    def to_internal_value(self, data: Any) -> int:
        integral = not isinstance(data, float) or (math.isfinite(data) and data.is_integer())
        if not isinstance(data, bool) and integral:
            try:
                return super().to_internal_value(data)
            except serializers.ValidationError:
                pass
        raise serializers.ValidationError(f"must be a whole number, not {_shown(data)}",
                                          code="invalid")


def _name_field(**kwargs: Any) -> serializers.RegexField:
    """Fluvio's naming rule, stated in the schema as the core enforces it."""
    return serializers.RegexField(NAME_PATTERN, max_length=MAX_NAME_LENGTH, error_messages={
        "invalid": "may contain only lowercase letters, digits and '-', and must start "
                   "and end with a letter or digit"}, **kwargs)


class TopicCreateSerializer(serializers.Serializer):
    name = _name_field()
    partition_count = WholeNumberField(required=False, allow_null=True, min_value=1,
                                       max_value=MAX_PARTITIONS)
    partitions = WholeNumberField(required=False, allow_null=True, min_value=1,
                                  max_value=MAX_PARTITIONS, write_only=True,
                                  help_text="partition_count by its fluvio name (--partitions); "
                                            "a number, not the describe shape's replica map")
    replication = WholeNumberField(required=False, allow_null=True, min_value=1,
                                   max_value=MAX_REPLICATION)
    ignore_rack_assignment = serializers.BooleanField(default=False)
    replica_assignment = ReplicaAssignmentField(required=False, allow_null=True)
    min_lrs = WholeNumberField(default=1, min_value=1, max_value=MAX_REPLICATION)
    max_lag = WholeNumberField(default=1000, min_value=1, max_value=MAX_LAG)
    unclean_leader_election = serializers.BooleanField(default=False)
    dry_run = serializers.BooleanField(default=False)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        alias = data.pop("partitions", None)
        if alias is not None:
            if data.get("partition_count") not in (None, alias):
                raise serializers.ValidationError(
                    {"partitions": ["differs from partition_count; give one of them"]})
            data["partition_count"] = alias
        return data


class TopicUploadSerializer(serializers.Serializer):
    name = _name_field()
    file = serializers.FileField(help_text="Replica assignment file: JSON, at most 1 MiB.")
    dry_run = serializers.BooleanField(default=False)
    min_lrs = WholeNumberField(default=1, min_value=1, max_value=MAX_REPLICATION)
    max_lag = WholeNumberField(default=1000, min_value=1, max_value=MAX_LAG)
    unclean_leader_election = serializers.BooleanField(default=False)


class SpuSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    type = serializers.ChoiceField(choices=["custom", "managed"])
    rack = serializers.CharField(allow_null=True)
    public = serializers.CharField()
    private = serializers.CharField()
    resolution = serializers.ChoiceField(choices=_values(SpuResolution))
    group = serializers.CharField(allow_null=True)
    leaders = serializers.IntegerField(help_text="partitions it leads now")
    followers = serializers.IntegerField(help_text="replicas it hosts without leading")
    replicas = serializers.IntegerField()
    leader_skew = serializers.FloatField(allow_null=True, help_text="(leaders - avg) / avg")
    replica_skew = serializers.FloatField(allow_null=True, help_text="(replicas - avg) / avg")
    preferred_leader_share = serializers.FloatField(
        allow_null=True, help_text="share of the partitions it is first replica of that it leads")


class SpuRegisterSerializer(serializers.Serializer):
    id = serializers.IntegerField(min_value=0, max_value=MAX_SPU_ID)
    rack = serializers.CharField(required=False, allow_blank=True, default="", max_length=63)
    public = serializers.CharField(required=False, allow_blank=True, default="",
                                   max_length=MAX_ENDPOINT_LENGTH)
    private = serializers.CharField(required=False, allow_blank=True, default="",
                                    max_length=MAX_ENDPOINT_LENGTH)


class SpuUpdateSerializer(serializers.Serializer):
    """003's Modify SPU: fields left out stay as they are; rack "" removes the rack."""
    rack = serializers.CharField(required=False, allow_blank=True)
    public = serializers.CharField(required=False, allow_blank=False, help_text="HOST:PORT")
    private = serializers.CharField(required=False, allow_blank=False, help_text="HOST:PORT")


class SpuGroupSerializer(serializers.Serializer):
    name = serializers.CharField()
    replicas = serializers.IntegerField()
    min_id = serializers.IntegerField()
    rack = serializers.CharField(allow_null=True)
    storage_size = serializers.CharField()
    resolution = serializers.ChoiceField(choices=_values(GroupResolution))
    reason = serializers.CharField(allow_blank=True)
    spus = serializers.ListField(child=serializers.IntegerField())


class SpuGroupCreateSerializer(serializers.Serializer):
    name = _name_field()
    replicas = serializers.IntegerField(min_value=1, max_value=MAX_GROUP_REPLICAS)
    min_id = serializers.IntegerField(required=False, allow_null=True, default=None,
                                      min_value=0, max_value=MAX_SPU_ID)
    rack = serializers.CharField(required=False, allow_blank=True, default="")
    storage_size = serializers.RegexField(SIZE_PATTERN, required=False, default="1Gi")


class SpuGroupScaleSerializer(serializers.Serializer):
    replicas = serializers.IntegerField(min_value=1, max_value=MAX_GROUP_REPLICAS)
    force = serializers.BooleanField(
        default=False, help_text="scale down even though the SPUs it ends hold replicas")


class ReplicaStatusSerializer(serializers.Serializer):
    spu = serializers.IntegerField()
    leo = serializers.IntegerField()
    hw = serializers.IntegerField()


class PartitionSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    leader = serializers.IntegerField(allow_null=True, help_text="the actual leader")
    preferred_leader = serializers.IntegerField(help_text="the first replica")
    replicas = serializers.ListField(child=serializers.IntegerField())
    lrs = serializers.ListField(child=serializers.IntegerField())
    resolution = serializers.ChoiceField(choices=_values(PartitionResolution))
    hw = serializers.IntegerField()
    leo = serializers.IntegerField()
    replica_status = ReplicaStatusSerializer(many=True, help_text="each replica's LEO and HW")
    waiting_for = serializers.ListField(child=serializers.IntegerField(),
                                        help_text="Offline: the last LRS members it waits for")
    reason = serializers.CharField(allow_blank=True, help_text="why an Offline partition waits")


class EventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    at = serializers.DateTimeField()
    actor = serializers.CharField(help_text="user name or controller")
    object_type = serializers.CharField()
    object_name = serializers.CharField()
    operation = serializers.CharField()
    params = serializers.DictField()
    result = serializers.CharField(allow_blank=True)


class HealthSerializer(serializers.Serializer):
    message = serializers.CharField()
    link = serializers.CharField()
    severity = serializers.ChoiceField(choices=["warn", "bad"])


class ClusterSnapshotSerializer(serializers.Serializer):
    spus = serializers.IntegerField()
    spus_online = serializers.IntegerField()
    topics = serializers.DictField(child=serializers.IntegerField(),
                                   help_text="topic count per resolution")
    partitions = serializers.IntegerField()
    leaderless = serializers.IntegerField()
    under_replicated = serializers.IntegerField()
    health = HealthSerializer(many=True)


# --- Outages and records ---------------------------------------------------------

class OutageSerializer(serializers.Serializer):
    spus = serializers.ListField(child=serializers.IntegerField())
    resolution = serializers.CharField()
    settled = serializers.BooleanField(allow_null=True)


class ProduceSerializer(serializers.Serializer):
    partition = serializers.IntegerField(min_value=0, default=0)
    count = serializers.IntegerField(min_value=1, max_value=settings.PRODUCE_MAX_RECORDS,
                                     required=False, help_text="at most PRODUCE_MAX_RECORDS")
    values = serializers.ListField(child=serializers.CharField(max_length=65536),
                                   required=False, min_length=1, max_length=10000)
    acks = serializers.ChoiceField(choices=["0", "1", "all"], default="1")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if ("count" in data) == ("values" in data):
            raise serializers.ValidationError("give exactly one of count and values")
        return data


class RecordsQuerySerializer(serializers.Serializer):
    partition = serializers.IntegerField(min_value=0, max_value=MAX_PARTITIONS - 1, default=0)
    offset = serializers.IntegerField(min_value=0, max_value=MAX_OFFSET, default=0)
    max = serializers.IntegerField(min_value=1, max_value=settings.CONSUME_MAX_RECORDS,
                                   default=1000, help_text="at most CONSUME_MAX_RECORDS")
    uncommitted = serializers.BooleanField(default=False)


class RecordSerializer(serializers.Serializer):
    offset = serializers.IntegerField()
    value = serializers.CharField()


class TokenRequestSerializer(AuthTokenSerializer):
    def validate_username(self, username: str) -> str:
        # Before any sign-in attempt: django-axes stores the name in a varchar(255).
        limit = get_user_model()._meta.get_field("username").max_length
        if len(username) > limit:
            raise serializers.ValidationError(f"a username is at most {limit} characters")
        return username
