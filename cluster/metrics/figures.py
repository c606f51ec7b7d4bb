"""Scrape-time figures read from the store: two grouped queries, never a row per partition.

At 100,000 partitions what comes back is one row per topic and one per
distinct (replica list, leader) pair, which computed assignment keeps to a few
hundred; per-SPU counts are summed from those in Python.
"""
from __future__ import annotations

import json
from collections import Counter
from typing import NamedTuple

from django.db import connection

from cluster.core.spus import SpuResolution
from cluster.models import Partition, Spu, Topic
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


def _sql(template: str) -> list[tuple]:
    table = connection.ops.quote_name(Partition._meta.db_table)
    length = "json_array_length" if connection.vendor == "sqlite" else "jsonb_array_length"
    with connection.cursor() as cursor:
        cursor.execute(template.format(table=table, length=length))
        return cursor.fetchall()


def topic_figures() -> list[TopicFigures]:
    """Per topic: partitions, those without a leader (offline), LRS smaller than replicas."""
    # Equal columns are the usual case and need no JSON parsing to rule out.
    rows = _sql("SELECT topic_id, COUNT(*), SUM(CASE WHEN leader IS NULL THEN 1 ELSE 0 END), "
                "SUM(CASE WHEN lrs = replicas THEN 0 WHEN {length}(lrs) < {length}(replicas) "
                "THEN 1 ELSE 0 END) FROM {table} GROUP BY topic_id")
    names = dict(Topic.objects.values_list("id", "name"))
    return sorted(TopicFigures(names[pk], total, offline, under)
                  for pk, total, offline, under in rows if pk in names)


def spu_counts() -> SpuCounts:
    """Leaders, replicas, preferred-leader partitions and those the preferred SPU leads."""
    counts = SpuCounts(Counter(), Counter(), Counter(), Counter())
    for replicas, leader, n in _sql("SELECT replicas, leader, COUNT(*) FROM {table} "
                                    "GROUP BY replicas, leader"):
        spus = json.loads(replicas) if isinstance(replicas, str) else replicas
        counts.replicas.update(dict.fromkeys(spus, n))
        if leader is not None:
            counts.leaders[leader] += n
        if spus:
            counts.preferred[spus[0]] += n
            counts.preferred_leading[spus[0]] += n if leader == spus[0] else 0
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
