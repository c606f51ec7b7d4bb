"""``POST /api/plans/<id>/apply/``, ``/pause/``, ``/resume/``, ``/cancel/``, and ``PATCH``
(or ``POST``) ``/throttle/`` to change a running plan's throttles (operators only).

Each answers the plan's execution status, the shape of ``plan status --json``;
a refusal (a plan that no longer fits the cluster, a state that does not allow
the request, another plan being carried out, even one applied at the same
instant) answers 409 and changes nothing.
"""
from __future__ import annotations

from typing import Any, Callable

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from cluster.api.views import ERRORS, ApiView
from planner.api.serializers import PlanStatusSerializer
from planner.core.execution import MAX_BYTES_PER_S
from planner.execution import (plan_apply, plan_cancel, plan_pause, plan_resume, plan_status,
                               plan_throttle)


class PlanApplySerializer(serializers.Serializer):
    max_moves_per_spu = serializers.IntegerField(required=False, min_value=1, default=None,
                                                 allow_null=True)
    max_moves = serializers.IntegerField(required=False, min_value=1, default=None,
                                         allow_null=True)
    throttle_bytes_per_s = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_BYTES_PER_S, default=None, allow_null=True,
        help_text="bytes a second the moves may copy (Kafka's --throttle); none by default")


class PlanThrottleSerializer(serializers.Serializer):
    """The throttles to change; a key left out keeps its value."""
    max_moves_per_spu = serializers.IntegerField(required=False, min_value=1)
    max_moves = serializers.IntegerField(required=False, min_value=1)
    throttle_bytes_per_s = serializers.IntegerField(
        required=False, min_value=1, max_value=MAX_BYTES_PER_S, allow_null=True,
        help_text="bytes a second the moves may copy; null removes the byte throttle")


class ExecutionStatusSerializer(PlanStatusSerializer):
    """``plan status --json``: the plan's status keys and the execution's throttle."""
    moves_failed = serializers.IntegerField()
    max_moves_per_spu = serializers.IntegerField()
    max_moves = serializers.IntegerField()
    throttle_bytes_per_s = serializers.IntegerField(allow_null=True)
    bytes_copied = serializers.IntegerField()
    bytes_per_s = serializers.FloatField(allow_null=True)
    eta_s = serializers.FloatField(allow_null=True)
    estimated_finish_at = serializers.DateTimeField(allow_null=True)


class PlanApplyView(ApiView):
    serializer_class = PlanApplySerializer

    @extend_schema(summary="Carry a stored plan out (Cruise Control's throttle)",
                   request=PlanApplySerializer,
                   responses={200: ExecutionStatusSerializer, **ERRORS})
    def post(self, request: Request, plan_id: int) -> Response:
        data = self.validated(PlanApplySerializer, request.data)
        plan_apply(plan_id=plan_id, max_moves_per_spu=data["max_moves_per_spu"],
                   max_moves=data["max_moves"],
                   throttle_bytes_per_s=data["throttle_bytes_per_s"], by=request.user)
        return Response(plan_status(plan_id=plan_id))


def _control_view(service: Callable[..., Any], summary: str) -> type[ApiView]:
    @extend_schema(summary=summary, request=None,
                   responses={200: ExecutionStatusSerializer, **ERRORS})
    def post(self: ApiView, request: Request, plan_id: int) -> Response:
        service(plan_id=plan_id, by=request.user)
        return Response(plan_status(plan_id=plan_id))

    name = f"Plan{service.__name__.split('_')[1].title()}View"
    return type(name, (ApiView,), {"post": post, "serializer_class": ExecutionStatusSerializer,
                                   "takes_body": False})


PlanPauseView = _control_view(plan_pause, "Pause a plan: no new moves, those in flight finish")
PlanResumeView = _control_view(plan_resume, "Resume a paused plan")
PlanCancelView = _control_view(plan_cancel, "Cancel a plan: no new moves, those in flight "
                                            "roll back (or finish where that is safer)")


class PlanThrottleView(ApiView):
    serializer_class = PlanThrottleSerializer

    @extend_schema(summary="Change the throttles of a running or paused plan (from the "
                           "executor's next step)", request=PlanThrottleSerializer,
                   responses={200: ExecutionStatusSerializer, **ERRORS})
    def patch(self, request: Request, plan_id: int) -> Response:
        data = self.validated(PlanThrottleSerializer, request.data)
        plan_throttle(plan_id=plan_id, by=request.user, **data)
        return Response(plan_status(plan_id=plan_id))

    @extend_schema(summary="Change the throttles of a running or paused plan (as PATCH)",
                   request=PlanThrottleSerializer,
                   responses={200: ExecutionStatusSerializer, **ERRORS})
    def post(self, request: Request, plan_id: int) -> Response:
        return self.patch(request, plan_id)
