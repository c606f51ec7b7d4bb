from __future__ import annotations

from django.urls import path

from cluster import views
from cluster.views import outages
from cluster.views.topics import topic_produce_view

app_name = "cluster"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("spus/", views.spu_list, name="spus"),
    path("spus/register/", views.spu_register_view, name="spu-register"),
    path("spus/<int:spu_id>/unregister/", views.spu_unregister_view, name="spu-unregister"),
    # Outage controls (the API's twins under /api/ answer JSON; these redirect back).
    path("spus/<int:spu_id>/offline/", outages.spu_offline_view, name="spu-offline"),
    path("spus/<int:spu_id>/online/", outages.spu_online_view, name="spu-online"),
    path("spus/<int:spu_id>/kill/", outages.spu_kill_view, name="spu-kill"),
    path("racks/<str:rack>/offline/", outages.rack_offline_view, name="rack-offline"),
    path("racks/<str:rack>/online/", outages.rack_online_view, name="rack-online"),
    path("spu-groups/create/", views.spg_create_view, name="spg-create"),
    path("spu-groups/<str:name>/scale/", views.spg_scale_view, name="spg-scale"),
    path("spu-groups/<str:name>/delete/", views.spg_delete_view, name="spg-delete"),
    path("topics/", views.topic_list, name="topics"),
    # Create pages live outside /topics/ because "new" is a valid topic name.
    path("new-topic/", views.topic_create_view, name="topic-create"),
    path("new-topic/upload/", views.topic_upload_view, name="topic-upload"),
    path("topics/<str:name>/", views.topic_detail, name="topic"),
    path("topics/<str:name>/delete/", views.topic_delete_view, name="topic-delete"),
    path("topics/<str:name>/produce/", topic_produce_view, name="topic-produce"),
    path("partitions/", views.partition_list, name="partitions"),
    path("heatmaps/", views.heatmaps, name="heatmaps"),
    path("events/", views.event_list, name="events"),
    path("assets/plotly.min.js", views.plotly_js, name="plotly-js"),
]
