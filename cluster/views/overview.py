"""The cluster overview: racks as columns, totals, health, topics, events."""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from cluster.models import Event
from cluster.selectors.health import cluster_health, topic_counts_by_resolution
from cluster.selectors.stats import cluster_stats
from cluster.views.live import rendered_seqs
from cluster.views.tables import racks_down, share_cell, spu_row


def overview(request: HttpRequest) -> HttpResponse:
    seqs = rendered_seqs()  # before the data: a change after it is resynced on connect
    stats, topics = cluster_stats(), topic_counts_by_resolution()
    return render(request, "cluster/overview.html", {
        "racks": {rack: [spu_row(s) for s in members]
                  for rack, members in stats.racks().items()},
        "stats": stats, "live_seqs": seqs, "racks_down": racks_down(stats.spus.values()),
        "online": stats.spus_online,
        "preferred": share_cell(stats.preferred_share),
        "health": cluster_health(stats, topics),
        "resolutions": topics,
        "events": Event.objects.all()[:10],
    })
