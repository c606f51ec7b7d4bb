"""Scrape-time figures read from the partition counts the store keeps beside the rows
(cluster/projections/aggregates.py): one row per topic, and per-SPU sums over the
(topic, SPU) counts, never a row per partition.
"""
from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from django.db.models import Sum

from cluster.core.spus import SpuResolution
from cluster.core.tally import TOPIC_TOTAL
from cluster.models import Spu, TopicSpuCount
from cluster.selectors.stats import NO_RACK


class TopicFigures(NamedTuple):
    topic: str
    total: int
    offline: int
    under_replicated: int


class SpuFigures(NamedTuple):
    spu: int
    rack: str
    up: bool
    leaders: int
    replicas: int
    imbalance: float


class SpuCounts(NamedTuple):
    leaders: Counter[int]
    replicas: Counter[int]
    preferred: Counter[int]
    preferred_leading: Counter[int]


def topic_figures() -> list[TopicFigures]:
    """Per topic: partitions, those without a leader (offline), LRS smaller than replicas."""
    return sorted(TopicFigures(*row) for row in TopicSpuCount.objects.filter(
        spu=TOPIC_TOTAL).values_list("topic__name", "partitions", "leaderless",
                                     "under_replicated"))


def spu_counts() -> SpuCounts:
    """Leaders, replicas, preferred-leader partitions and those the preferred SPU leads."""
    counts = SpuCounts(Counter(), Counter(), Counter(), Counter())
    for spu, leaders, replicas, preferred, preferred_leading in (
            TopicSpuCount.objects.filter(spu__gte=0).order_by().values("spu")
            .annotate(Sum("leaders"), Sum("replicas"), Sum("preferred"),
                      Sum("preferred_leading")).values_list(
                "spu", "leaders__sum", "replicas__sum", "preferred__sum",
                "preferred_leading__sum")):
        counts.leaders[spu], counts.replicas[spu] = leaders, replicas
        counts.preferred[spu], counts.preferred_leading[spu] = preferred, preferred_leading
    return counts


def spu_figures() -> list[SpuFigures]:
    c = spu_counts()
    return [SpuFigures(spu, rack or NO_RACK, resolution == SpuResolution.ONLINE.value,
                       c.leaders[spu], c.replicas[spu],
                       imbalance_ratio(c.preferred[spu], c.preferred_leading[spu]))
            for spu, rack, resolution in Spu.objects.order_by("id")
            .values_list("id", "rack", "resolution")]


def imbalance_ratio(preferred: int, preferred_leading: int) -> float:
    """Kafka's leader.imbalance.per.broker.percentage rule, as a ratio: of the partitions
    an SPU is preferred leader of, the share it does not lead."""
    return (preferred - preferred_leading) / preferred if preferred else 0.0
