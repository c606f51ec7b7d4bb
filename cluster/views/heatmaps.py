"""Heatmaps: rack x SPU leaders and followers, topic x SPU replicas, failover."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from cluster import charts
from cluster.selectors.heatmaps import MAX_TOPICS, topic_spu_chart
from cluster.selectors.stats import cluster_stats
from cluster.views.live import rendered_seqs
from cluster.views.tables import spu_row


def heatmaps(request: HttpRequest) -> HttpResponse:
    seqs = rendered_seqs()  # before the data: a change after it is resynced on connect
    stats = cluster_stats(with_failover=True)
    racks = stats.racks()
    topics = topic_spu_chart(stats)
    return render(request, "cluster/heatmaps.html", {
        "stats": stats, "racks": racks,
        "rack_rows": {rack: [spu_row(s) for s in spus] for rack, spus in racks.items()},
        "has_data": bool(stats.spus), "live_seqs": seqs,
        "leaders_fig": charts.rack_spu_heatmap(racks, "leaders"),
        "followers_fig": charts.rack_spu_heatmap(racks, "followers"),
        "topics_fig": topics.figure,
        "failover_fig": charts.failover_heatmap(stats),
        "topics_capped": topics.capped, "max_topics": MAX_TOPICS,
        "has_topics": bool(topics.shown), "has_leaders": bool(stats.failover),
        "plotly_config": charts.PLOTLY_CONFIG})
