"""Self-healing's series: anomalies by type and state, and the moves its plans carried out."""
from __future__ import annotations

from collections.abc import Iterator

from django.db.models import Count
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from healing import core
from healing.models import Anomaly
from healing.selectors import self_healing_moves

PREFIX = "controlroom_"


def families() -> Iterator[Metric]:
    """Open anomalies per (type, state), every pair from the first scrape (alerts see a 0)."""
    counts = dict.fromkeys(((t.value, s.value) for t in core.AnomalyType
                            for s in core.OPEN_STATES), 0)
    for row in Anomaly.objects.filter(state__in=[s.value for s in core.OPEN_STATES]) \
            .values("type", "state").annotate(n=Count("id")):
        counts[(row["type"], row["state"])] = row["n"]
    gauge = GaugeMetricFamily(PREFIX + "anomalies", "open self-healing anomalies by type and "
                              "state", labels=["type", "state"])
    for (kind, state), n in sorted(counts.items()):
        gauge.add_metric([kind, state], n)
    yield gauge
    yield CounterMetricFamily(PREFIX + "self_healing_moves", "replica moves carried out by "
                              "self-healing plans", value=self_healing_moves())
