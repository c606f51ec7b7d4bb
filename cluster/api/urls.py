"""API routes. Views are login_not_required: DRF answers 401/403 JSON itself
instead of LoginRequiredMiddleware redirecting an API client to the login page.
(Recent DRF marks APIView login-exempt already; saying it here keeps that explicit.)"""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.urls import path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.permissions import IsAuthenticated

from cluster.api import leaders, live, metadata, net, outages, tokens, views


class SchemaView(views.JsonErrors, SpectacularAPIView):
    permission_classes = [IsAuthenticated]


api = views.as_api


app_name = "api"
urlpatterns = [
    path("spus/", api(views.SpuListView), name="spus"),
    path("spus/<int:spu_id>/", api(views.SpuDetailView), name="spu"),
    path("spu-groups/", api(views.SpuGroupListView), name="spu-groups"),
    path("spu-groups/<str:name>/", api(views.SpuGroupDetailView), name="spu-group"),
    path("topics/", api(views.TopicListView), name="topics"),
    path("topics/<str:name>/", api(views.TopicDetailView), name="topic"),
    path("partitions/", api(views.PartitionListView), name="partitions"),
    path("events/", api(views.EventListView), name="events"),
    path("cluster/", api(views.ClusterSnapshotView), name="cluster"),
    path("live/snapshot/", api(live.LiveSnapshotView), name="live-snapshot"),
    path("spus/<int:spu_id>/offline/", api(outages.SpuOfflineView), name="spu-offline"),
    path("spus/<int:spu_id>/online/", api(outages.SpuOnlineView), name="spu-online"),
    path("spus/<int:spu_id>/kill/", api(outages.SpuKillView), name="spu-kill"),
    path("racks/<str:rack>/offline/", api(outages.RackOfflineView), name="rack-offline"),
    path("racks/<str:rack>/online/", api(outages.RackOnlineView), name="rack-online"),
    path("topics/<str:name>/produce/", api(outages.ProduceView), name="topic-produce"),
    path("produce/<int:outcome_id>/", api(outages.ProduceOutcomeView), name="produce-outcome"),
    path("topics/<str:name>/records/", api(outages.RecordsView), name="topic-records"),
    path("leaders/elect/", api(leaders.LeaderElectView), name="leaders-elect"),
    path("metadata/", api(metadata.MetadataLogView), name="metadata"),
    path("net/cuts/", api(net.NetCutsView), name="net-cuts"),
    path("net/heal/", api(net.NetHealView), name="net-heal"),
    path("net/report/", api(net.NetReportView), name="net-report"),
    path("net/matrix/", api(net.NetMatrixView), name="net-matrix"),
    path("token/", api(tokens.TokenView), name="token"),
    path("tokens/<str:username>/", api(tokens.UserTokenView), name="user-token"),
    path("schema/", api(SchemaView), name="schema"),
    # A page for people: login_required because DRF marks its views login-exempt.
    path("docs/", login_required(SpectacularSwaggerView.as_view(url_name="api:schema")),
         name="docs"),
]
