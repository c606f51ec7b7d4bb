"""API twin of ``net``: the cuts in force, cut, heal, the rehearsal report, the link matrix.

Viewers read; cutting and healing need the operator role (403 JSON). A change
answers once it is stored; with a worker running it is nudged, without one the
engine takes one step here (sessions expire by the SC's timeout, later).
"""
from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from cluster.api.views import ERRORS, READ_ERRORS, ApiView
from cluster.services.network import (SOURCES, CutRequest, net_cut, net_heal, net_matrix,
                                      net_report, net_status, net_step)


class CutSerializer(serializers.Serializer):
    """A cut in force, as ``net status --json`` lists it."""
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=["controller", "producers", "spu", "racks"])
    spus = serializers.ListField(child=serializers.IntegerField())
    peers = serializers.ListField(child=serializers.IntegerField())
    racks = serializers.ListField(child=serializers.CharField())
    one_way = serializers.BooleanField()
    inbound = serializers.BooleanField(help_text="one-way inbound: what the SPUs are sent "
                                                 "is dropped, what they send arrives")
    since_ms = serializers.IntegerField()
    label = serializers.CharField()


class CutRequestSerializer(serializers.Serializer):
    spu = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0)
    source = serializers.ChoiceField(choices=list(SOURCES), required=False, default="controller",
                                     help_text="the other end: controller, spu (give peer) "
                                               "or producers")
    peer = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0)
    racks = serializers.CharField(required=False, allow_null=True, default=None, max_length=500,
                                  help_text="rack groups to split: A,B or A+B,C")
    one_way = serializers.BooleanField(required=False, default=False)
    inbound = serializers.BooleanField(required=False, default=False,
                                       help_text="with one_way: drop what the SPU is sent "
                                                 "instead of what it sends")


class HealSerializer(serializers.Serializer):
    id = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=1)
    all = serializers.BooleanField(required=False, default=False)


class HealedSerializer(serializers.Serializer):
    healed = CutSerializer(many=True)
    rejoined = serializers.ListField(child=serializers.IntegerField())
    in_force = serializers.IntegerField()


class NetCutsView(ApiView):
    serializer_class = CutSerializer
    pagination_class = None  # a handful of cuts: the whole list, as ``net status --json``

    @extend_schema(summary="The network cuts in force (empty when healed)",
                   responses={200: CutSerializer(many=True), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        return Response(net_status())

    @extend_schema(summary="Cut an SPU from the controller, another SPU or the producers "
                           "(one-way: only what it sends; one-way inbound: only what it is sent), "
                           "or split racks",
                   request=CutRequestSerializer, responses={200: CutSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        data = self.validated(CutRequestSerializer, request.data)
        cut = net_cut(request=CutRequest(data["spu"], data["source"], data["peer"],
                                         data["racks"], data["one_way"], data["inbound"]),
                       by=request.user)
        net_step()
        return Response(cut)


class NetHealView(ApiView):
    serializer_class = HealSerializer

    @extend_schema(summary="Heal the latest cut, one cut by id, or all",
                   request=HealSerializer, responses={200: HealedSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        data = self.validated(HealSerializer, request.data)
        out = net_heal(cut_id=data["id"], heal_all=data["all"], by=request.user)
        net_step()
        return Response(out)


class NetReportView(ApiView):
    serializer_class = serializers.Serializer

    @extend_schema(summary="The latest network rehearsal: writes kept, acks=1 writes "
                           "truncated (offsets), unacknowledged writes lost, time without "
                           "a leader per partition, refused writes (report null before any cut)",
                   responses={200: dict[str, Any], **READ_ERRORS})
    def get(self, request: Request) -> Response:
        return Response({"report": net_report()})


class NetMatrixView(ApiView):
    serializer_class = serializers.Serializer

    @extend_schema(summary="Who reaches whom: a row per SPU, a cell per other end",
                   responses={200: dict[str, Any], **READ_ERRORS})
    def get(self, request: Request) -> Response:
        return Response(net_matrix())
