"""What needs attention: health reasons, each naming the filtered list that shows it."""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from django.db.models import Count

from cluster.core.spus import SpuResolution
from cluster.core.topic_controller import TopicResolution
from cluster.models import Topic
from cluster.selectors.filters import NOT_PROVISIONED
from cluster.selectors.stats import ClusterStats

OFFLINE, INIT = SpuResolution.OFFLINE.value, SpuResolution.INIT.value


@dataclass(frozen=True)
class HealthReason:
    message: str
    link: str
    severity: str = "bad"


def cluster_health(stats: ClusterStats,
                   topics_by_resolution: Mapping[str, int]) -> list[HealthReason]:
    """What needs attention, each naming the filtered list that shows it.

    ``topics_by_resolution`` is ``topic_counts_by_resolution()``, which the
    callers show anyway.
    """
    reasons: list[HealthReason] = []
    by_res = Counter(s.resolution for s in stats.spus.values())
    not_provisioned = sum(n for res, n in topics_by_resolution.items() if res != TopicResolution.PROVISIONED.value)
    killed = sum(s.loop_killed and s.resolution != OFFLINE for s in stats.spus.values())
    checks = [
        (by_res.get(OFFLINE, 0), "SPU{s} offline", f"/spus/?resolution={OFFLINE}", "bad"),
        (killed, "SPU{s} with a killed loop (no heartbeat: Offline once it lapses)",
         "/spus/", "bad"),
        (by_res.get(INIT, 0), f"SPU{{s}} registered but never connected ({INIT})",
         f"/spus/?resolution={INIT}", "warn"),
        (stats.leaderless, "partition{s} without a leader", "/partitions/?leaderless=1", "bad"),
        (stats.under_replicated, "partition{s} whose LRS is smaller than their replicas",
         "/partitions/?under_replicated=1", "warn"),
        (not_provisioned, "topic{s} not Provisioned",
         f"/topics/?resolution={NOT_PROVISIONED}", "warn"),
    ]
    for count, text, link, severity in checks:
        if count:
            reasons.append(HealthReason(f"{count} {text.format(s='' if count == 1 else 's')}",
                                        link, severity))
    return reasons


def topic_counts_by_resolution() -> dict[str, int]:
    return dict(Topic.objects.order_by("resolution").values("resolution")
                .annotate(n=Count("id")).values_list("resolution", "n"))
