"""``GET /api/metadata/?from=&limit=``: the metadata log, as `metadata dump --json` (viewers too)."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from cluster.api.views import READ_ERRORS, ApiView
from cluster.selectors.metadata import metadata_page, parse_limit, parse_offset


class MetadataPageSerializer(serializers.Serializer):
    entries = serializers.ListField(child=serializers.DictField(),
                                    help_text="each with offset, type, at and its fields")
    start = serializers.IntegerField(help_text="the first offset the log still holds")
    head = serializers.IntegerField(help_text="the last offset written")
    applied = serializers.IntegerField(help_text="the last offset the database applied")
    next = serializers.IntegerField(help_text="pass as from= for the next page")


class MetadataLogView(ApiView):
    serializer_class = MetadataPageSerializer

    @extend_schema(summary="The control plane's metadata log from an offset, oldest first",
                   parameters=[OpenApiParameter("from", int), OpenApiParameter("limit", int)],
                   responses={200: MetadataPageSerializer, **READ_ERRORS})
    def get(self, request: Request) -> Response:
        q = request.query_params
        first = parse_offset(q.get("from", "0"))
        limit = parse_limit(q.get("limit", "1000"))
        return Response(metadata_page(first, limit))
