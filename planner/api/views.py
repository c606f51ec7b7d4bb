"""Plan API: request, read and cancel plans and grids (same services as the pages).

Writes are the operator's (``OperatorWrites``); every refusal is ``{"error",
"details"}`` through ``JsonErrors``, as in cluster/api/.
"""
from __future__ import annotations

from typing import Any

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from cluster.api.views import ERRORS, READ_ERRORS, ApiView
from planner import core
from planner.api import serializers as s
from planner.core.jobs import PlanState
from planner.execution import plan_stop
from planner.models import Plan, PlanGrid
from planner.bytes_plans import parse_capacities, plan_create_bytes
from planner.core.bytes_balance import ByteOptions
from planner.selectors import (grid_detail, moves_filtered, moves_with_outcome, plan_created,
                               plan_detail, plan_summary)
from planner.services import grid_cancel, grid_request, plan_request, scenario_from_input

NOT_FOUND = {**READ_ERRORS, 404: ERRORS[404]}


def scenario_of(data: dict[str, Any]) -> core.Scenario:
    return scenario_from_input(add_spus=data["add_spu"], remove_spus=data["remove_spu"],
                               lose_racks=data["lose_rack"], replication=data["replication"],
                               name=data["name"])


def options_of(data: dict[str, Any]) -> core.Options:
    return core.Options(anti_affinity=data["anti_affinity"],
                        balance_leaders=data["leader_balance"],
                        optimise_order=data["order_optimisation"])


def byte_options(data: dict[str, Any]) -> ByteOptions:
    """The byte flags of a request, as ``plan rebalance --balance bytes`` reads them."""
    return ByteOptions(max_disk_percent=data["max_disk_percent"] or 80.0,
                       capacities=parse_capacities(data["capacity"]),
                       topics=frozenset(data["topics"]) or None,
                       exclude_topics=frozenset(data["exclude_topics"]),
                       leaders_only=data["leaders_only"])


def _accepted(state: str) -> int:
    """202 while a worker computes it; 201 once it is computed."""
    return status.HTTP_202_ACCEPTED if state == PlanState.COMPUTING else status.HTTP_201_CREATED


class PlanListView(ApiView):
    serializer_class = s.PlanSummarySerializer

    @extend_schema(summary="List plans, newest first, with their state",
                   responses={200: s.PlanSummarySerializer(many=True), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        return self.page_of(Plan.objects.all(), plan_summary)

    @extend_schema(summary="Plan a what-if (as `plan rebalance`)",
                   description="Computed here (201, state pending) when no worker runs, "
                               "otherwise queued for the worker (202, state computing). Bad "
                               "input answers 400 and stores nothing.",
                   request=s.PlanRequestSerializer,
                   responses={201: s.PlanCreatedSerializer, 202: s.PlanCreatedSerializer,
                              **ERRORS})
    def post(self, request: Request) -> Response:
        data = self.validated(s.PlanRequestSerializer, request.data)
        if data["balance"] == "bytes":
            record = plan_create_bytes(
                scenario=scenario_of(data), options=options_of(data), opts=byte_options(data),
                throttle=data["throttle_bytes_per_s"],
                max_moves_per_spu=data["max_moves_per_spu"], snapshot_id=data["snapshot"],
                by=request.user)
        else:
            record = plan_request(scenario=scenario_of(data), options=options_of(data),
                                  engine=data["engine"], by=request.user,
                                  throttle=data["throttle_bytes_per_s"],
                                  max_moves_per_spu=data["max_moves_per_spu"])
        return Response(plan_created(record), status=_accepted(record.state))


class PlanDetailView(ApiView):
    serializer_class = s.PlanDetailSerializer

    @extend_schema(summary="A plan: status, metrics (with the lower bound), moves (paged)",
                   parameters=[OpenApiParameter("topic", str, description="moves of this topic"),
                               OpenApiParameter("spu", int, description="moves touching this "
                                                                         "SPU"),
                               OpenApiParameter("limit", int), OpenApiParameter("offset", int)],
                   responses={200: s.PlanDetailSerializer, **NOT_FOUND})
    def get(self, request: Request, plan_id: int) -> Response:
        record = get_object_or_404(Plan, pk=plan_id)
        data = self.validated(s.MoveFilterSerializer, request.query_params)
        moves = moves_filtered(moves_with_outcome(record), data["topic"], data.get("spu"))
        page = self.paginator.paginate_queryset(moves, request, view=self)
        body = self.paginator.get_paginated_response(page).data
        return Response({**plan_detail(record), "moves": body})


class PlanCancelView(ApiView):
    serializer_class = s.PlanSummarySerializer
    takes_body = False

    @extend_schema(summary="Cancel a plan: its computation, or, once applied, its execution "
                           "(no new moves; those in flight roll back or finish)",
                   request=None, responses={200: s.PlanSummarySerializer, **ERRORS})
    def post(self, request: Request, plan_id: int) -> Response:
        return Response(plan_summary(plan_stop(plan_id=plan_id, by=request.user)))


class GridListView(ApiView):
    serializer_class = s.GridSerializer

    @extend_schema(summary="List scenario grids, newest first",
                   responses={200: s.GridSerializer(many=True), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        return self.page_of(PlanGrid.objects.all(), grid_detail)

    @extend_schema(summary="Evaluate a grid of what-ifs, each with Kafka --generate's cost",
                   description="Without scenarios: every SPU removal, every rack loss and "
                               "adding 1..up_to SPUs to each rack (as `plan grid`).",
                   request=s.GridRequestSerializer,
                   responses={201: s.GridSerializer, 202: s.GridSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        data = self.validated(s.GridRequestSerializer, request.data)
        scenarios = [scenario_of(row) for row in data.get("scenarios") or []]
        record = grid_request(scenarios=scenarios, up_to=data["up_to"], options=options_of(data),
                              engine=data["engine"], by=request.user)
        return Response(grid_detail(record), status=_accepted(record.state))


class GridDetailView(ApiView):
    serializer_class = s.GridSerializer

    @extend_schema(summary="A scenario grid and its rows", responses={200: s.GridSerializer,
                                                                      **NOT_FOUND})
    def get(self, request: Request, grid_id: int) -> Response:
        return Response(grid_detail(get_object_or_404(PlanGrid, pk=grid_id)))


class GridCancelView(ApiView):
    serializer_class = s.GridSerializer
    takes_body = False

    @extend_schema(summary="Cancel a grid being computed", request=None,
                   responses={200: s.GridSerializer, **ERRORS})
    def post(self, request: Request, grid_id: int) -> Response:
        return Response(grid_detail(grid_cancel(grid_id=grid_id, by=request.user)))
