"""``GET /api/history/?at=`` and ``GET /api/history/diff/?from=&to=``: replayed moments
(viewers may read them), the same selectors as `history at|diff` and the pages."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from cluster.api.views import READ_ERRORS, ApiView
from cluster.errors import InvalidInput
from history.present import MAX_PAGE_SIZE, PAGE_SIZE, moment_view
from history.selectors import history_diff, parse_point


class StampSerializer(serializers.Serializer):
    offset = serializers.IntegerField(allow_null=True, help_text="metadata-log offset")
    at = serializers.IntegerField(allow_null=True, help_text="epoch ms")
    time = serializers.CharField(allow_null=True, help_text="ISO 8601, UTC")


class HistoryMomentSerializer(serializers.Serializer):
    moment = StampSerializer(help_text="the last entry the replay applied")
    replayed_from = serializers.IntegerField(help_text="offset of the snapshot replayed from")
    begins = StampSerializer(help_text="where history begins (its oldest snapshot)")
    head = StampSerializer(help_text="the log's newest offset, and now")
    retention_s = serializers.FloatField()
    totals = serializers.DictField(child=serializers.IntegerField())
    spus = serializers.ListField(child=serializers.DictField(),
                                 help_text="spu, rack, state (online/offline/killed), counts")
    partitions = serializers.ListField(child=serializers.DictField(),
                                       help_text="rows as `partition list --json`")
    count = serializers.IntegerField()
    page = serializers.IntegerField()
    pages = serializers.IntegerField()
    charts = serializers.DictField(required=False, help_text="Plotly figures (charts=1)")


class HistoryDiffSerializer(serializers.Serializer):
    to = StampSerializer()
    partitions = serializers.ListField(child=serializers.DictField(),
                                       help_text="topic, partition, changed, leader/lrs/replicas")
    counts = serializers.DictField(child=serializers.IntegerField())
    spus = serializers.ListField(child=serializers.DictField())
    racks = serializers.ListField(child=serializers.DictField())


# "from" is a Python keyword: the field is added under its JSON name.
HistoryDiffSerializer._declared_fields["from"] = StampSerializer()


def _whole(value: str, name: str, low: int, high: int) -> int:
    if not value.isdigit() or not low <= int(value) <= high:
        raise InvalidInput(f"{name} must be a whole number from {low} to {high}", field=name)
    return int(value)


class HistoryMomentView(ApiView):
    serializer_class = HistoryMomentSerializer

    @extend_schema(summary="The cluster at a past moment, replayed from the nearest snapshot",
                   parameters=[OpenApiParameter("at", str, description="offset or ISO time; "
                                                "default the log's head"),
                               OpenApiParameter("topic", str), OpenApiParameter("page", int),
                               OpenApiParameter("size", int), OpenApiParameter("charts", int)],
                   responses={200: HistoryMomentSerializer, **READ_ERRORS})
    def get(self, request: Request) -> Response:
        q = request.query_params
        point = parse_point(q["at"]) if q.get("at") else None
        return Response(moment_view(
            point, topic=q.get("topic") or None, page=_whole(q.get("page", "1"), "page", 1, 10**9),
            size=_whole(q.get("size", str(PAGE_SIZE)), "size", 1, MAX_PAGE_SIZE),
            with_charts=q.get("charts") == "1"))


class HistoryDiffView(ApiView):
    serializer_class = HistoryDiffSerializer

    @extend_schema(summary="What changed between two moments: leaders, LRS, replicas",
                   parameters=[OpenApiParameter("from", str, required=True),
                               OpenApiParameter("to", str, required=True)],
                   responses={200: HistoryDiffSerializer, **READ_ERRORS})
    def get(self, request: Request) -> Response:
        q = request.query_params
        for name in ("from", "to"):
            if not q.get(name):
                raise InvalidInput(f"{name} is required (an offset or an ISO time)", field=name)
        return Response(history_diff(parse_point(q["from"], "from"), parse_point(q["to"], "to")))
