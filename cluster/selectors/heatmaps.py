"""The topic x SPU heatmap's rows: the largest Provisioned topics, for the page and its live updates."""
from __future__ import annotations

from dataclasses import dataclass

from cluster import charts
from cluster.core.topic_controller import TopicResolution
from cluster.models import Topic
from cluster.selectors.stats import ClusterStats, replica_counts_for

# A taller chart stops being readable; the largest topics matter most for balance.
MAX_TOPICS = 60


@dataclass(frozen=True)
class TopicChart:
    figure: charts.Figure
    shown: int
    capped: bool


def topic_spu_chart(stats: ClusterStats) -> TopicChart:
    """Replicas per topic and SPU for the ``MAX_TOPICS`` largest Provisioned topics."""
    topics = list(Topic.objects.filter(partitions__gt=0,
                                       resolution=TopicResolution.PROVISIONED.value)
                  .order_by("-partitions", "name").values_list("id", "name")[:MAX_TOPICS + 1])
    shown = topics[:MAX_TOPICS]
    figure = charts.topic_spu_heatmap([name for _, name in shown], sorted(stats.spus),
                                      replica_counts_for([tid for tid, _ in shown]),
                                      [tid for tid, _ in shown],
                                      {s.id: s.state_label for s in stats.spus.values()})
    return TopicChart(figure, len(shown), len(topics) > MAX_TOPICS)
