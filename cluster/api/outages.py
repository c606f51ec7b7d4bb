"""API for outages and records: what the dashboard's outage controls call.

Writes need the operator role (viewers get 403 JSON); refusals answer
``{"error", "details"}`` through the API's shared ``ApiView``. Outage calls
return once the change is stored: with a worker running they only nudge it,
without one they run the elections here before answering.
"""
from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from cluster.api.serializers import (OutageSerializer, ProduceSerializer, RecordSerializer,
                                     RecordsQuerySerializer)
from cluster.api.views import ERRORS, READ_ERRORS, ApiView
from cluster.services import outages
from cluster.services.records import (records_consume, records_produce_and_wait,
                                      records_produce_outcome)


class _OutageView(ApiView):
    serializer_class = OutageSerializer
    takes_body = False
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


class ProduceOutcomeSerializer(serializers.Serializer):
    """A write's outcome; ``id`` and ``poll`` name it while acks=all is still pending."""
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    acks = serializers.ChoiceField(choices=["0", "1", "all"])
    state = serializers.ChoiceField(choices=["appended", "acknowledged", "pending"])
    count = serializers.IntegerField()
    base_offset = serializers.IntegerField(allow_null=True)
    code = serializers.CharField(allow_null=True)
    reason = serializers.CharField(allow_null=True)
    id = serializers.IntegerField(required=False, help_text="the handle of an acks=all write")
    poll = serializers.CharField(required=False, help_text="GET this for the outcome")


class PolledOutcomeSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.ChoiceField(choices=["pending", "acknowledged", "failed"])
    count = serializers.IntegerField()
    acked = serializers.IntegerField()
    code = serializers.CharField(allow_null=True)
    reason = serializers.CharField(allow_null=True)


PRODUCE_DOC = ("acks=0 and acks=1 answer 200 once the leader appended. acks=all waits up to "
               "`wait` seconds (default and maximum PRODUCE_WAIT_S) for the whole LRS: 200 "
               "with state acknowledged, 409 if the write failed, or 202 with state pending, "
               "an `id` and a `poll` URL to GET the outcome from (kept for an hour).")


class ProduceView(ApiView):
    serializer_class = ProduceSerializer

    @extend_schema(summary="Append records to a partition of a topic", description=PRODUCE_DOC,
                   request=ProduceSerializer,
                   parameters=[OpenApiParameter("wait", float, description="seconds acks=all "
                                                "waits before answering 202 with a handle")],
                   responses={200: ProduceOutcomeSerializer, 202: ProduceOutcomeSerializer,
                              **ERRORS})
    def post(self, request: Request, name: str) -> Response:
        data = self.validated(ProduceSerializer, request.data)
        outcome = records_produce_and_wait(topic=name, partition=data["partition"],
                                           acks=data["acks"], count=data.get("count"),
                                           values=data.get("values"),
                                           wait_s=_wait(request.query_params))
        if outcome.state in ("refused", "failed"):
            return Response({"error": f"write {outcome.state}: {outcome.reason}",
                             "details": outcome.as_json()}, status=status.HTTP_409_CONFLICT)
        if outcome.state != "pending":
            return Response(outcome.as_json())
        poll = reverse("api:produce-outcome", kwargs={"outcome_id": outcome.first_id})
        return Response({**outcome.as_json(), "id": outcome.first_id, "poll": poll},
                        status=status.HTTP_202_ACCEPTED)


class ProduceOutcomeView(ApiView):
    serializer_class = PolledOutcomeSerializer

    @extend_schema(summary="The outcome of an acks=all write, by the id a 202 gave",
                   responses={200: PolledOutcomeSerializer, **READ_ERRORS, 404: ERRORS[404]})
    def get(self, request: Request, outcome_id: int) -> Response:
        return Response(records_produce_outcome(outcome_id=outcome_id))


def _wait(query: Any) -> float:
    wait = _float(query, "wait", settings.PRODUCE_WAIT_S)
    if not 0 <= wait <= settings.PRODUCE_WAIT_S:
        raise serializers.ValidationError(
            {"wait": f"must be between 0 and {settings.PRODUCE_WAIT_S:g} seconds"})
    return wait


def _float(query: Any, name: str, default: float) -> float:
    try:
        return float(query.get(name, default))
    except (TypeError, ValueError):
        raise serializers.ValidationError({name: "must be a number of seconds"}) from None


class RecordsView(ApiView):
    serializer_class = RecordSerializer

    @extend_schema(summary="Read a partition's records (committed unless uncommitted=true)",
                   parameters=[RecordsQuerySerializer],
                   responses={200: RecordSerializer(many=True), **ERRORS})
    def get(self, request: Request, name: str) -> Response:
        query = self.validated(RecordsQuerySerializer, request.query_params)
        records = records_consume(topic=name, partition=query["partition"],
                                  offset=query["offset"], max_records=query["max"],
                                  uncommitted=query["uncommitted"])
        return Response(records)
