"""The live pages' cluster payload, built as the pages read the store (selectors and the
SPU table's cells), handed down to the live batching adapter with every batch staged into
the cluster group: by the event announcements, the network view and the unit of work's
partition rows (``publish_partitions``), so the adapter reads no registry for it."""
from __future__ import annotations

from collections import Counter
from typing import Any

from cluster import charts
from cluster.adapters import live_batches
from cluster.cells import racks_down, spu_row
from cluster.core.replication import Key
from cluster.live import HealthRow, LiveData, TopicRow
from cluster.models import Topic
from cluster.selectors.health import cluster_health
from cluster.selectors.heatmaps import topic_spu_chart
from cluster.selectors.stats import ClusterStats, TopicStats, cluster_stats


def cluster_load() -> LiveData:
    """SPU loads, topic counts, totals, health and the heatmaps' figures, read as the pages do."""
    stats = cluster_stats(with_failover=True)
    racks = stats.racks()
    topics = list(Topic.objects.order_by("name").values_list("id", "name", "resolution", "reason"))
    by_resolution = Counter(res for _, _, res, _ in topics)
    return {"spus": [_spu_row(s) for s in stats.spus.values()],
            "topics": [_topic_row(stats, *t) for t in topics], "totals": _totals(stats),
            "health": [HealthRow(message=r.message, link=r.link, severity=r.severity)
                       for r in cluster_health(stats, by_resolution)],
            "charts": {"chart-leaders": charts.rack_spu_heatmap(racks, "leaders"),
                       "chart-followers": charts.rack_spu_heatmap(racks, "followers"),
                       "chart-topics": topic_spu_chart(stats).figure,
                       "chart-failover": charts.failover_heatmap(stats)},
            "racks_down": sorted(racks_down(stats.spus.values()))}


def publish_partitions(changes: live_batches.Changed, *, moved: list[Key]) -> None:
    """After a unit of work's commit: its changed partitions to their block groups, and
    those whose leader, LRS or resolution moved to the cluster group, with the loads."""
    live_batches.publish_partitions(changes, moved=moved, loads=cluster_load)


def _spu_row(s: Any) -> dict[str, Any]:
    # Cells as the pages render them (cluster/cells.py), so the rule stays in one place.
    cells = {name: {"text": cell.text, "css": cell.css}
             for name, cell in spu_row(s).items() if name != "spu"}
    return {"id": s.id, "resolution": s.resolution, "rack": s.rack or "",
            "leaders": s.leaders, "followers": s.followers, "replicas": s.replicas,
            "preferred": s.preferred, "preferred_leading": s.preferred_leading,
            "cells": cells}


def _topic_row(stats: ClusterStats, topic_id: int, name: str, resolution: str,
               reason: str) -> TopicRow:
    counts = stats.topics.get(topic_id) or TopicStats()
    return {"name": name, "resolution": resolution, "reason": reason,
            "partitions": counts.partitions, "leaderless": counts.leaderless,
            "under_replicated": counts.under_replicated,
            "preferred_leading": counts.preferred_leading}


def _totals(stats: ClusterStats) -> dict[str, int]:
    return {"spus": len(stats.spus), "spus_online": stats.spus_online,
            "partitions": stats.partitions, "leaderless": stats.leaderless,
            "under_replicated": stats.under_replicated, "replicas": stats.replicas,
            "preferred_leading": sum(s.preferred_leading for s in stats.spus.values()),
            "racks": len(stats.racks()), "topics": len(stats.topics)}


