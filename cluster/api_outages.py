"""API for outages and records: what the dashboard's outage controls call.

Include under ``api/``: ``path("api/", include("cluster.api_outages"))``.
Writes need the operator role (viewers get 403 JSON); refusals answer
``{"error", "details"}`` through the API's shared ``ApiView``. Outage calls
return once the change is stored: with a worker running they only nudge it,
without one they run the elections here before answering.
"""
from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from cluster.api.views import ERRORS, ApiView, as_api
from cluster.services import outages
from cluster.services.records import (produce_outcome_refresh, records_consume,
                                      records_produce)
from cluster.services.settle import ensure_replicated, produce_and_settle, worker_running


class OutageSerializer(serializers.Serializer):
    spus = serializers.ListField(child=serializers.IntegerField())
    resolution = serializers.CharField()
    settled = serializers.BooleanField(allow_null=True)


class ProduceSerializer(serializers.Serializer):
    partition = serializers.IntegerField(min_value=0, default=0)
    count = serializers.IntegerField(min_value=1, required=False)
    values = serializers.ListField(child=serializers.CharField(max_length=65536),
                                   required=False, min_length=1, max_length=10000)
    acks = serializers.ChoiceField(choices=["0", "1", "all"], default="1")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        if ("count" in data) == ("values" in data):
            raise serializers.ValidationError("give exactly one of count and values")
        return data


class RecordSerializer(serializers.Serializer):
    offset = serializers.IntegerField()
    value = serializers.CharField()


class _OutageView(ApiView):
    serializer_class = OutageSerializer
    service: Any = None

    def answer(self, result: outages.OutageResult) -> Response:
        settled = outages.settle_outage(result, wait=False)
        return Response(settled.as_json(), status=status.HTTP_200_OK)


def _outage_view(service: Any, key: str, summary: str) -> type[ApiView]:
    @extend_schema(summary=summary, request=None, responses={200: OutageSerializer, **ERRORS})
    def post(self: _OutageView, request: Request, **kwargs: Any) -> Response:
        return self.answer(service(**{key: kwargs[key]}, by=request.user))

    return type(f"{service.__name__.title().replace('_', '')}View", (_OutageView,),
                {"post": post})


SpuOfflineView = _outage_view(outages.spu_offline, "spu_id", "Take an SPU offline")
SpuOnlineView = _outage_view(outages.spu_online, "spu_id", "Bring an SPU back online")
SpuKillView = _outage_view(outages.spu_kill, "spu_id",
                           "Stop an SPU's loop; the connection manager notices later")
RackOfflineView = _outage_view(outages.rack_offline, "rack", "Take a rack offline")
RackOnlineView = _outage_view(outages.rack_online, "rack", "Bring a rack back online")


class ProduceView(ApiView):
    serializer_class = ProduceSerializer

    @extend_schema(summary="Append records to a partition of a topic",
                   request=ProduceSerializer, responses={200: None, **ERRORS})
    def post(self, request: Request, name: str) -> Response:
        data = self.validated(ProduceSerializer, request.data)
        ensure_replicated(name)
        outcome = records_produce(topic=name, partition=data["partition"], acks=data["acks"],
                                  count=data.get("count"), values=data.get("values"))
        # A web request does not wait for a worker's replication; without one it settles here.
        outcome = (produce_outcome_refresh(outcome) if worker_running()
                   else produce_and_settle(outcome, timeout_s=10))
        if outcome.state in ("refused", "failed"):
            return Response({"error": f"write {outcome.state}: {outcome.reason}",
                             "details": outcome.as_json()}, status=status.HTTP_409_CONFLICT)
        return Response(outcome.as_json())


class RecordsView(ApiView):
    serializer_class = RecordSerializer

    @extend_schema(summary="Read a partition's records (committed unless uncommitted=true)",
                   parameters=[OpenApiParameter("partition", int), OpenApiParameter("offset", int),
                               OpenApiParameter("max", int),
                               OpenApiParameter("uncommitted", bool)],
                   responses={200: RecordSerializer(many=True), **ERRORS})
    def get(self, request: Request, name: str) -> Response:
        query = request.query_params
        records = records_consume(topic=name, partition=_int(query, "partition", 0),
                                  offset=_int(query, "offset", 0),
                                  max_records=_int(query, "max", 1000),
                                  uncommitted=query.get("uncommitted") in ("1", "true", "yes"))
        return Response(records)


def _int(query: Any, name: str, default: int) -> int:
    try:
        return int(query.get(name, default))
    except (TypeError, ValueError):
        raise serializers.ValidationError({name: "must be an integer"}) from None


urlpatterns = [
    path("spus/<int:spu_id>/offline/", as_api(SpuOfflineView), name="spu-offline"),
    path("spus/<int:spu_id>/online/", as_api(SpuOnlineView), name="spu-online"),
    path("spus/<int:spu_id>/kill/", as_api(SpuKillView), name="spu-kill"),
    path("racks/<str:rack>/offline/", as_api(RackOfflineView), name="rack-offline"),
    path("racks/<str:rack>/online/", as_api(RackOnlineView), name="rack-online"),
    path("topics/<str:name>/produce/", as_api(ProduceView), name="topic-produce"),
    path("topics/<str:name>/records/", as_api(RecordsView), name="topic-records"),
]
