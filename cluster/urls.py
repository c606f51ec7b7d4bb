from __future__ import annotations

from django.urls import path

from cluster import views

app_name = "cluster"
urlpatterns = [
    path("", views.overview, name="overview"),
    path("spus/", views.spu_list, name="spus"),
    path("spus/register/", views.spu_register_view, name="spu-register"),
    path("spus/<int:spu_id>/unregister/", views.spu_unregister_view, name="spu-unregister"),
    path("spu-groups/create/", views.spg_create_view, name="spg-create"),
    path("spu-groups/<str:name>/scale/", views.spg_scale_view, name="spg-scale"),
    path("spu-groups/<str:name>/delete/", views.spg_delete_view, name="spg-delete"),
    path("topics/", views.topic_list, name="topics"),
    # Create pages live outside /topics/ because "new" is a valid topic name.
    path("new-topic/", views.topic_create_view, name="topic-create"),
    path("new-topic/upload/", views.topic_upload_view, name="topic-upload"),
    path("topics/<str:name>/", views.topic_detail, name="topic"),
    path("topics/<str:name>/delete/", views.topic_delete_view, name="topic-delete"),
    path("partitions/", views.partition_list, name="partitions"),
    path("heatmaps/", views.heatmaps, name="heatmaps"),
    path("events/", views.event_list, name="events"),
    path("assets/plotly.min.js", views.plotly_js, name="plotly-js"),
]
