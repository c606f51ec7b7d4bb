"""``POST /api/leaders/elect/``: the API twin of ``leader elect`` (operators only)."""
from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from cluster.api.views import ERRORS, ApiView
from cluster.services.leaders import leader_elect_preferred, leader_elect_unclean


class LeaderElectSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["preferred", "unclean"])
    topic = serializers.CharField(required=False, allow_null=True, default=None)
    partition = serializers.IntegerField(required=False, allow_null=True, default=None,
                                         min_value=0)
    spu = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0)

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if data["type"] == "unclean" and (data["topic"] is None or data["partition"] is None):
            raise serializers.ValidationError({"partition": "unclean needs topic and partition"})
        if data["type"] == "preferred" and (data["partition"] is not None
                                            or data["spu"] is not None):
            raise serializers.ValidationError({"partition": "partition and spu go with unclean"})
        return data


class LeaderElectView(ApiView):
    serializer_class = LeaderElectSerializer

    @extend_schema(summary="Preferred-leader election (all or one topic), or an unclean "
                           "election of one Offline partition",
                   request=LeaderElectSerializer, responses={200: None, **ERRORS})
    def post(self, request: Request) -> Response:
        data = self.validated(LeaderElectSerializer, request.data)
        if data["type"] == "preferred":
            return Response(leader_elect_preferred(topic=data["topic"], by=request.user).as_json())
        report = leader_elect_unclean(topic=data["topic"], partition=data["partition"],
                                      spu=data["spu"], by=request.user)
        return Response(report.as_json())
