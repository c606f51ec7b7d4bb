from __future__ import annotations

from django.urls import path

from cluster.views import (assets, events, heatmaps, leaders, network, outages, overview,
                           partitions, spus, topics)

app_name = "cluster"
urlpatterns = [
    path("", overview.overview, name="overview"),
    path("spus/", spus.spu_list, name="spus"),
    path("spus/register/", spus.spu_register_view, name="spu-register"),
    path("spus/<int:spu_id>/unregister/", spus.spu_unregister_view, name="spu-unregister"),
    # Outage controls (the API's twins under /api/ answer JSON; these redirect back).
    path("spus/<int:spu_id>/offline/", outages.spu_offline_view, name="spu-offline"),
    path("spus/<int:spu_id>/online/", outages.spu_online_view, name="spu-online"),
    path("spus/<int:spu_id>/kill/", outages.spu_kill_view, name="spu-kill"),
    path("racks/<str:rack>/offline/", outages.rack_offline_view, name="rack-offline"),
    path("racks/<str:rack>/online/", outages.rack_online_view, name="rack-online"),
    path("net/cut/", network.net_cut_view, name="net-cut"),
    path("net/heal/", network.net_heal_view, name="net-heal"),
    path("net/report/", network.net_report_page, name="net-report"),
    path("leaders/elect-preferred/", leaders.leaders_elect_preferred_view,
         name="leaders-elect-preferred"),
    path("spu-groups/create/", spus.spg_create_view, name="spg-create"),
    path("spu-groups/<str:name>/scale/", spus.spg_scale_view, name="spg-scale"),
    path("spu-groups/<str:name>/delete/", spus.spg_delete_view, name="spg-delete"),
    path("topics/", topics.topic_list, name="topics"),
    # Create pages live outside /topics/ because "new" is a valid topic name.
    path("new-topic/", topics.topic_create_view, name="topic-create"),
    path("new-topic/upload/", topics.topic_upload_view, name="topic-upload"),
    path("topics/<str:name>/", topics.topic_detail, name="topic"),
    path("topics/<str:name>/delete/", topics.topic_delete_view, name="topic-delete"),
    path("topics/<str:name>/produce/", topics.topic_produce_view, name="topic-produce"),
    path("topics/<str:name>/assignment.json", topics.topic_assignment_file,
         name="topic-assignment"),
    path("partitions/", partitions.partition_list, name="partitions"),
    path("heatmaps/", heatmaps.heatmaps, name="heatmaps"),
    path("events/", events.event_list, name="events"),
    # The version in the path lets browsers keep the 4.8 MB bundle for good.
    path(f"assets/plotly-{assets.PLOTLY_VERSION}.min.js", assets.plotly_js, name="plotly-js"),
    path("assets/plotly.min.js", assets.plotly_js, {"versioned": False}, name="plotly-js-any"),
    path("favicon.ico", assets.favicon, name="favicon"),
]
