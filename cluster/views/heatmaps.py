"""Heatmaps: rack x SPU leaders and followers, topic x SPU replicas, failover."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from cluster import charts
from cluster.models import Topic
from cluster.selectors.stats import cluster_stats, partition_columns, replica_counts_by_topic
from cluster.core.topic_controller import TopicResolution

# A taller chart stops being readable; the largest topics matter most for balance.
MAX_TOPICS = 60


def heatmaps(request: HttpRequest) -> HttpResponse:
    cols = partition_columns()
    stats = cluster_stats(with_failover=True, cols=cols)
    racks = stats.racks()
    topics = list(Topic.objects.filter(partitions__gt=0, resolution=TopicResolution.PROVISIONED.value)
                  .order_by("-partitions", "name").values_list("id", "name")[:MAX_TOPICS + 1])
    shown = topics[:MAX_TOPICS]
    return render(request, "cluster/heatmaps.html", {
        "stats": stats, "racks": racks, "has_data": bool(stats.spus),
        "leaders_fig": charts.rack_spu_heatmap(racks, "leaders"),
        "followers_fig": charts.rack_spu_heatmap(racks, "followers"),
        "topics_fig": charts.topic_spu_heatmap(
            [name for _, name in shown], sorted(stats.spus),
            replica_counts_by_topic(cols), [tid for tid, _ in shown]),
        "failover_fig": charts.failover_heatmap(stats),
        "topics_capped": len(topics) > MAX_TOPICS, "max_topics": MAX_TOPICS,
        "has_topics": bool(shown), "has_leaders": bool(stats.failover),
        "plotly_config": charts.PLOTLY_CONFIG})
