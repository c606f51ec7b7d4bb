"""``/api/healing/``: status (mode, waiting, settings, open anomalies), history, settings.

Viewers read; switching self-healing and setting thresholds are the operator's
(``OperatorWrites``, through ``ApiView``). A bad name or value answers 400
with ``{"error", "details"}`` and stores nothing.
"""
from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from cluster.api.views import ERRORS, READ_ERRORS, ApiView
from cluster.errors import InvalidInput
from healing import core
from healing.selectors import anomaly_history, healing_status, open_anomalies
from healing.services import current_settings, healing_disable, healing_enable, healing_set


class AnomalySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    type = serializers.ChoiceField(choices=[t.value for t in core.AnomalyType])
    subject = serializers.CharField()
    state = serializers.ChoiceField(choices=[s.value for s in core.AnomalyState])
    detail = serializers.CharField()
    spus = serializers.ListField(child=serializers.IntegerField())
    detected_at = serializers.DateTimeField()
    alerted_at = serializers.DateTimeField(allow_null=True)
    planned_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    plan = serializers.IntegerField(allow_null=True, help_text="the plan that fixes it")
    plan_id = serializers.IntegerField(allow_null=True, help_text="the same, by its other name")
    plans = serializers.IntegerField(help_text="plans made for it")
    preempted_by = serializers.IntegerField(
        allow_null=True, help_text="the operator's plan its plan was cancelled to make way for")
    plan_state = serializers.CharField(allow_null=True)
    moves = serializers.IntegerField(allow_null=True)
    moves_done = serializers.IntegerField(allow_null=True)
    bytes_moved = serializers.IntegerField(allow_null=True)
    duration_s = serializers.FloatField(allow_null=True)


class StatusSerializer(serializers.Serializer):
    mode = serializers.ChoiceField(choices=[m.value for m in core.Mode])
    waiting = serializers.CharField(help_text="why the last run planned nothing, or empty")
    checked_at = serializers.DateTimeField(allow_null=True)
    settings = serializers.DictField()
    anomalies = AnomalySerializer(many=True)
    self_healing_moves = serializers.IntegerField()


class ModeSerializer(serializers.Serializer):
    mode = serializers.ChoiceField(choices=[m.value for m in core.Mode])


class SettingSerializer(serializers.Serializer):
    name = serializers.ChoiceField(choices=list(core.SETTING_NAMES))
    value = serializers.CharField(max_length=32)


class HealingView(ApiView):
    serializer_class = StatusSerializer

    @extend_schema(summary="Self-healing: mode, settings and the open anomalies",
                   responses={200: StatusSerializer, **READ_ERRORS})
    def get(self, request: Request) -> Response:
        return Response(healing_status())

    @extend_schema(summary="Switch self-healing: off, notify-only (dry run) or heal",
                   request=ModeSerializer, responses={200: StatusSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        mode = core.Mode(self.validated(ModeSerializer, request.data)["mode"])
        if mode is core.Mode.OFF:
            healing_disable(by=request.user)
        else:
            healing_enable(notify_only=mode is core.Mode.NOTIFY_ONLY, by=request.user)
        return Response(healing_status())


class AnomalyListView(ApiView):
    serializer_class = AnomalySerializer

    @extend_schema(summary="Anomalies: the open ones, or the history of the closed ones",
                   parameters=[OpenApiParameter("state", str, enum=["open", "closed"])],
                   responses={200: AnomalySerializer(many=True), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        which = request.query_params.get("state", "open")
        if which not in ("open", "closed"):
            raise InvalidInput("state must be open or closed", field="state")
        return self.page_of(open_anomalies() if which == "open" else anomaly_history(1000),
                            lambda r: r)


class SettingsView(ApiView):
    serializer_class = SettingSerializer

    @extend_schema(summary="Self-healing's switches and thresholds",
                   responses={200: serializers.DictField(), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        return Response(current_settings().as_dict())

    @extend_schema(summary="Set one switch or threshold by name (as `healing set NAME VALUE`)",
                   request=SettingSerializer, responses={200: serializers.DictField(), **ERRORS})
    def post(self, request: Request) -> Response:
        data = self.validated(SettingSerializer, request.data)
        return Response(healing_set(name=data["name"], value=data["value"],
                                    by=request.user).as_dict())
