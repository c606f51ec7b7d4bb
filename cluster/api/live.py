"""The live pages' resync: one JSON snapshot per group, from the hot state.

The reading is in cluster/selectors/live.py; the format in cluster/live.py.
"""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from cluster.api.views import ApiView, READ_ERRORS
from cluster.selectors.live import live_snapshot

SNAPSHOT = inline_serializer("LiveSnapshot", {
    "type": serializers.CharField(), "v": serializers.IntegerField(),
    "group": serializers.CharField(), "seq": serializers.IntegerField(),
    "at": serializers.IntegerField(),
    "partitions": serializers.ListField(child=serializers.DictField(), required=False),
    "spus": serializers.ListField(child=serializers.DictField(), required=False),
    "topics": serializers.ListField(child=serializers.DictField(), required=False),
    "events": serializers.ListField(child=serializers.DictField(), required=False),
    "totals": serializers.DictField(required=False),
    "health": serializers.ListField(child=serializers.DictField(), required=False),
    "charts": serializers.DictField(required=False)})


class LiveSnapshotView(ApiView):
    @extend_schema(summary="A live group's current state, numbered with its sequence "
                           "(format in cluster/live.py)",
                   parameters=[OpenApiParameter("group", str, required=True,
                                                description="cluster, topic-<name> or "
                                                            "topic-<name>.<block>")],
                   responses={200: SNAPSHOT, **READ_ERRORS})
    def get(self, request: Request) -> Response:
        group = request.query_params.get("group", "")
        snapshot = live_snapshot(group)
        if snapshot is None:
            raise serializers.ValidationError(
                {"group": f"{group!r} is not a live group: cluster, topic-<name> or "
                          f"topic-<name>.<block>"})
        return Response(snapshot)
