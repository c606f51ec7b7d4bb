"""JSON API: the same selectors and services as the pages.

Every view derives from ``ApiView``, whose ``handle_exception`` (``JsonErrors``,
cluster/api/errors.py) is the one place a refusal becomes ``{"error", "details"}``.
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_not_required
from django.db.models import QuerySet
from django.http import JsonResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (OpenApiParameter, OpenApiResponse, extend_schema)
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.renderers import BrowsableAPIRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from cluster.api import serializers as s
from cluster.api import topic_list
from cluster.api.errors import JsonErrors
from cluster.api.parsers import JSONParser
from cluster.api.renderers import FastJSONRenderer
from cluster.forms import read_assignment_upload
from cluster.models import Event, Spu, SpuGroup, Topic
from cluster.roles import NO_ROLE, can_read, is_operator
from cluster.selectors.filters import (events_filtered, partitions_by_ids, partitions_filtered,
                                       topics_filtered)
from cluster.selectors.health import cluster_health, topic_counts_by_resolution
from cluster.selectors.shapes import group_describe, partition_rows_live, topic_describe
from cluster.selectors.stats import SpuStats, cluster_stats
from cluster.perf import gc_paused
from cluster.services import (spg_create, spg_delete, spg_scale, spu_register,
                              spu_unregister, spu_update, topic_create, topic_delete)

ERRORS = {code: OpenApiResponse(s.ErrorSerializer, description=text) for code, text in [
    (400, "bad input; nothing stored"), (403, "not logged in, or not an operator"),
    (404, "no such object"), (409, "conflicts with the store; nothing stored")]}
# A filter with a NUL byte is refused (webapp.middleware) before any read.
READ_ERRORS = {400: ERRORS[400], 403: ERRORS[403]}


class OperatorWrites(BasePermission):
    """Viewers read; writes need the operator role; a user in no group gets nothing."""
    message = "This needs the operator role."

    def has_permission(self, request: Request, view: Any) -> bool:
        if not (request.user and request.user.is_authenticated):
            return False
        if request.method in SAFE_METHODS:
            self.message = NO_ROLE
            return can_read(request.user)
        self.message = "This needs the operator role."
        return is_operator(request.user)


class ApiView(JsonErrors, GenericAPIView):
    permission_classes = [OperatorWrites]
    # False where a POST reads no body (an outage, a cancel): any key sent is refused.
    takes_body = True

    def initial(self, request: Any, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)  # authenticated and allowed first
        if request.method == "DELETE" or (request.method == "POST" and not self.takes_body):
            refuse_unknown_keys(request.data, ())

    def dispatch(self, request: Any, *args: Any, **kwargs: Any) -> Any:
        # A list of 50,000 replica lists is 100,000 small containers: decoded and
        # rendered with the cyclic GC paused, or full collections take most of the time.
        with gc_paused():
            response = super().dispatch(request, *args, **kwargs)
            if hasattr(response, "render") and not response.is_rendered:
                response.render()
            # Rendered, the answer is its bytes. Its data (a topic of 50,000 partitions:
            # 100,000 containers) freed now, with the collector still paused, is never
            # scanned; kept until the server dropped the response, it was the young
            # generation's at the next collections (30-40 ms each for gen 0 then gen 1 while
            # the engine stepped) and, promoted, pushed a full collection onto a later request.
            if getattr(response, "is_rendered", False):
                response.data = None
        # DRF keeps the response on the view, and the view and the response itself in the
        # response's renderer context: cycles, so the rendered data (100,000 containers for
        # a topic of 50,000 partitions) outlived the request until a collection found it,
        # and that collection's pause landed on a later request (issue 33's p99). Without
        # the links back, the response and its data are freed when the server drops them.
        self.__dict__.pop("response", None)
        context = getattr(response, "renderer_context", None)
        if isinstance(context, dict):
            context.pop("response", None)
        return response

    def validated(self, serializer_class: type, data: Any) -> dict[str, Any]:
        serializer = serializer_class(data=data)
        if data is self.request.data:
            refuse_unknown_keys(data, serializer.fields)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    def page_of(self, items: Any, to_dict: Any) -> Response:
        # Dicts go out as built: the serializers document the shape (the schema
        # test checks it) but rendering 50,000 replica lists through them is slow.
        page = self.paginate_queryset(items)
        return self.get_paginated_response([to_dict(item) for item in page])


def refuse_unknown_keys(body: Any, fields: Any) -> None:
    """A request body's keys the endpoint does not read are a 400 naming them: a misspelt
    option silently ignored would do something else than the client asked."""
    unknown = sorted(set(body) - set(fields)) if hasattr(body, "keys") else []
    if unknown:
        raise ValidationError({key[:60]: ["unknown key: this endpoint does not read it"]
                               for key in unknown[:20]})


# --- SPUs -------------------------------------------------------------------

def _spu_json(spu: SpuStats, endpoints: dict[int, tuple[str, str]]) -> dict[str, Any]:
    public, private = endpoints.get(spu.id, ("", ""))
    return {"id": spu.id, "type": spu.spu_type, "rack": spu.rack or None,
            "public": public, "private": private, "resolution": spu.resolution,
            "group": spu.group, "leaders": spu.leaders, "followers": spu.followers,
            "replicas": spu.replicas, "leader_skew": spu.leader_skew,
            "replica_skew": spu.replica_skew, "preferred_leader_share": spu.preferred_share}


def _spus_json(ids: list[int] | None = None, *, resolution: str = "",
               rack: str = "") -> list[dict[str, Any]]:
    stats = cluster_stats()
    query = Spu.objects.all() if ids is None else Spu.objects.filter(id__in=ids)
    endpoints = {i: (pub, priv) for i, pub, priv in
                 query.values_list("id", "public_endpoint", "private_endpoint")}
    return [_spu_json(spu, endpoints) for spu in stats.spus_where(resolution=resolution, rack=rack)
            if spu.id in endpoints]


class SpuListView(ApiView):
    serializer_class = s.SpuSerializer

    @extend_schema(summary="List SPUs with their leader / replica counts and skew",
                   parameters=[OpenApiParameter("resolution", str), OpenApiParameter("rack", str)],
                   responses={200: s.SpuSerializer(many=True), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        rows = _spus_json(resolution=request.query_params.get("resolution", ""),
                          rack=request.query_params.get("rack", ""))
        return self.page_of(rows, lambda r: r)

    @extend_schema(summary="Register a custom SPU", request=s.SpuRegisterSerializer,
                   responses={201: s.SpuSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        data = self.validated(s.SpuRegisterSerializer, request.data)
        spu = spu_register(spu_id=data["id"], rack=data["rack"], public=data["public"],
                           private=data["private"], by=request.user)
        return Response(_spus_json([spu.id])[0], status=status.HTTP_201_CREATED)


class SpuDetailView(ApiView):
    serializer_class = s.SpuSerializer

    @extend_schema(summary="One SPU", responses={200: s.SpuSerializer, **READ_ERRORS,
                                                 404: ERRORS[404]})
    def get(self, request: Request, spu_id: int) -> Response:
        rows = _spus_json([get_object_or_404(Spu, pk=spu_id).id])
        return Response(rows[0])

    @extend_schema(summary="Change an SPU's rack or endpoints (003's Modify SPU)",
                   request=s.SpuUpdateSerializer,
                   responses={200: s.SpuSerializer, **ERRORS})
    def patch(self, request: Request, spu_id: int) -> Response:
        data = self.validated(s.SpuUpdateSerializer, request.data)
        spu_update(spu_id=spu_id, by=request.user, **data)
        return Response(_spus_json([spu_id])[0])

    @extend_schema(summary="Unregister a custom SPU",
                   description="409 naming the topics while the SPU holds replicas, "
                               "unless force=true.",
                   parameters=[OpenApiParameter("force", bool)],
                   responses={204: None, **ERRORS})
    def delete(self, request: Request, spu_id: int) -> Response:
        spu_unregister(spu_id=spu_id, force=_flag(request, "force"), by=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- SPU groups ---------------------------------------------------------------

class SpuGroupListView(ApiView):
    serializer_class = s.SpuGroupSerializer

    @extend_schema(summary="List SPU groups",
                   responses={200: s.SpuGroupSerializer(many=True), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        return self.page_of(SpuGroup.objects.order_by("name"), group_describe)

    @extend_schema(summary="Create an SPU group (provisions its managed SPUs)",
                   request=s.SpuGroupCreateSerializer,
                   responses={201: s.SpuGroupSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        data = self.validated(s.SpuGroupCreateSerializer, request.data)
        group = spg_create(by=request.user, **data)
        return Response(group_describe(group), status=status.HTTP_201_CREATED)


class SpuGroupDetailView(ApiView):
    serializer_class = s.SpuGroupSerializer

    @extend_schema(summary="One SPU group", responses={200: s.SpuGroupSerializer,
                                                       **READ_ERRORS, 404: ERRORS[404]})
    def get(self, request: Request, name: str) -> Response:
        return Response(group_describe(get_object_or_404(SpuGroup, name=name)))

    @extend_schema(summary="Scale an SPU group", request=s.SpuGroupScaleSerializer,
                   responses={200: s.SpuGroupSerializer, **ERRORS})
    def patch(self, request: Request, name: str) -> Response:
        data = self.validated(s.SpuGroupScaleSerializer, request.data)
        return Response(group_describe(spg_scale(name=name, replicas=data["replicas"],
                                              force=data["force"], by=request.user)))

    @extend_schema(summary="Delete an SPU group and its SPUs",
                   responses={204: None, **ERRORS})
    def delete(self, request: Request, name: str) -> Response:
        spg_delete(name=name, by=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- Topics -------------------------------------------------------------------

class TopicListView(ApiView):
    serializer_class = s.TopicSerializer
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    @extend_schema(summary="List topics: settings and status; replica maps when asked for",
                   description="Each topic's describe shape without its replica map (the "
                               "detail has it). `fields` picks keys, `partitions` among "
                               "them; a page with maps holds at most "
                               f"{topic_list.MAX_PAGE_PARTITIONS:,} replica lists (one topic "
                               "at least), and `next` goes on from there.",
                   parameters=[OpenApiParameter("search", str, description="part of the name"),
                               OpenApiParameter("resolution", str,
                                                description="a resolution, or not-provisioned"),
                               OpenApiParameter("fields", str, description=(
                                   "comma-separated keys, e.g. name,partitions"))],
                   responses={200: s.TopicListItemSerializer(many=True), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        fields = topic_list.requested_fields(request.query_params.get("fields"))
        topics: QuerySet[Topic] = topic_list.topics_for(topics_filtered(
            request.query_params.get("search", ""), request.query_params.get("resolution", "")),
            fields)
        page = list(self.paginate_queryset(topics))
        kept = topic_list.within_budget(page, fields)
        if len(kept) < len(page):
            self.paginator.limit = len(kept)  # ``next`` starts after the last topic sent
        return self.get_paginated_response([topic_list.topic_fields(t, fields) for t in kept])

    @extend_schema(
        summary="Create a topic: computed, from a replica map, or from an uploaded file",
        description="201 with the stored topic; 200 with what would be stored when dry_run "
                    "is true (nothing stored). A topic with fewer SPUs than its replication "
                    "factor is stored as InsufficientResources with the reason.",
        request={"application/json": s.TopicCreateSerializer,
                 "multipart/form-data": s.TopicUploadSerializer},
        responses={201: OpenApiResponse(s.TopicSerializer, description=(
                       "the stored topic (describe shape); a Warning header says which "
                       "partitions start under-replicated, and why")),
                   200: s.TopicPreviewSerializer, **ERRORS})
    def post(self, request: Request) -> Response:
        if request.content_type.startswith("multipart/"):
            data = self.validated(s.TopicUploadSerializer, request.data)
            data["replica_assignment"] = read_assignment_upload(data.pop("file"))
        else:
            data = self.validated(s.TopicCreateSerializer, request.data)
        outcome = topic_create(
            name=data["name"], partitions=data.get("partition_count"),
            replication=data.get("replication"),
            ignore_racks=data.get("ignore_rack_assignment", False),
            replica_assignment=data.get("replica_assignment"), min_lrs=data["min_lrs"],
            max_lag=data["max_lag"],
            unclean_leader_election=data.get("unclean_leader_election", False),
            dry_run=data["dry_run"], by=request.user)
        if not outcome.stored:
            return Response(outcome.as_json_with_warning())
        # The 201 body stays the describe shape (GET answers the same); the warning rides along.
        headers = {"Warning": f'199 - "{outcome.warning}"'} if outcome.warning else None
        return Response(outcome.as_json(), status=status.HTTP_201_CREATED, headers=headers)


class TopicDetailView(ApiView):
    serializer_class = s.TopicSerializer
    # A topic's map is one object per partition: encoded by ujson (cluster/api/renderers.py).
    renderer_classes = [FastJSONRenderer, BrowsableAPIRenderer]

    @extend_schema(summary="Describe a topic", responses={200: s.TopicSerializer,
                                                          **READ_ERRORS, 404: ERRORS[404]})
    def get(self, request: Request, name: str) -> Response:
        return Response(topic_describe(get_object_or_404(Topic, name=name)))

    @extend_schema(summary="Delete a topic and its partitions", responses={204: None, **ERRORS})
    def delete(self, request: Request, name: str) -> Response:
        topic_delete(name=name, by=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- Partitions, events, cluster ---------------------------------------------------

def _flag(request: Request, name: str) -> bool:
    return request.query_params.get(name, "") in {"1", "true", "on"}


class PartitionListView(ApiView):
    serializer_class = s.PartitionSerializer

    @extend_schema(summary="List partitions with leader, replicas, LRS, HW, LEO",
                   parameters=[OpenApiParameter("topic", str), OpenApiParameter("spu", int),
                               OpenApiParameter("resolution", str),
                               OpenApiParameter("leaderless", bool),
                               OpenApiParameter("under_replicated", bool,
                                                description="LRS smaller than replicas")],
                   responses={200: s.PartitionSerializer(many=True), 400: ERRORS[400],
                              **READ_ERRORS})
    def get(self, request: Request) -> Response:
        spu = request.query_params.get("spu", "")
        if spu and not spu.isdigit():
            raise ValidationError({"spu": ["must be a non-negative integer"]})
        ids = partitions_filtered(topic=request.query_params.get("topic", ""),
                                  spu=int(spu) if spu else None,
                                  leaderless=_flag(request, "leaderless"),
                                  under_replicated=_flag(request, "under_replicated"),
                                  resolution=request.query_params.get("resolution", ""))
        page = self.paginate_queryset(ids)
        return self.get_paginated_response(partition_rows_live(partitions_by_ids(page)))


def _event_json(event: Event) -> dict[str, Any]:
    return {"id": event.id, "at": event.at, "actor": event.actor,
            "object_type": event.object_type, "object_name": event.object_name,
            "operation": event.operation, "params": event.params, "result": event.result}


class EventListView(ApiView):
    serializer_class = s.EventSerializer

    @extend_schema(summary="The audit trail, newest first",
                   parameters=[OpenApiParameter(n, str) for n in
                               ("actor", "object_type", "object_name", "operation", "q")],
                   responses={200: s.EventSerializer(many=True), **READ_ERRORS})
    def get(self, request: Request) -> Response:
        q = request.query_params
        events = events_filtered(actor=q.get("actor", ""), object_type=q.get("object_type", ""),
                                 object_name=q.get("object_name", ""),
                                 operation=q.get("operation", ""), text=q.get("q", ""))
        return self.page_of(events, _event_json)


class ClusterSnapshotView(ApiView):
    serializer_class = s.ClusterSnapshotSerializer

    @extend_schema(summary="Totals and health reasons: what a reconnecting page resyncs from",
                   responses={200: s.ClusterSnapshotSerializer, **READ_ERRORS})
    def get(self, request: Request) -> Response:
        stats, topics = cluster_stats(), topic_counts_by_resolution()
        return Response(s.ClusterSnapshotSerializer({
            "spus": len(stats.spus),
            "spus_online": stats.spus_online,
            "topics": topics, "partitions": stats.partitions,
            "leaderless": stats.leaderless, "under_replicated": stats.under_replicated,
            "health": [vars(r) for r in cluster_health(stats, topics)]}).data)


def as_api(view: type[GenericAPIView]) -> Any:
    """login_not_required: DRF answers 401/403 JSON itself, no redirect to the login page."""
    return login_not_required(view.as_view())


def api_not_found(request: Any, path: str = "") -> Any:
    """Unknown API paths answer JSON like every other refusal, not an HTML page."""
    return JsonResponse({"error": f"no API endpoint at /api/{path}", "details": None},
                        status=404)
