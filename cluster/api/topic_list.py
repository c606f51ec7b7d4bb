"""``GET /api/topics/``: summaries by default, replica maps only when ``?fields=`` names them.

A page of topics used to carry every replica map: 3.4 MB per page at 100,000
partitions (issue 36 item 4). The list now answers each topic's settings and
status; ``?fields=name,partitions`` (any of the describe shape's keys) picks the
keys, and a page that carries maps stops once it holds ``MAX_PAGE_PARTITIONS``
of them (at least one topic; ``next`` goes on from there). The detail,
``GET /api/topics/<name>/``, keeps the whole describe shape.
"""
from __future__ import annotations

from typing import Any

from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet
from rest_framework.exceptions import ValidationError

from cluster.models import Topic
from cluster.selectors.shapes import topic_describe

# Replica lists one page may carry when maps are asked for.
MAX_PAGE_PARTITIONS = 10_000
MAP = "partitions"
KEYS = ("name", "resolution", "reason", MAP, "partition_count", "replication",
        "ignore_rack_assignment", "min_lrs", "max_lag", "unclean_leader_election", "manual")
SUMMARY = tuple(k for k in KEYS if k != MAP)


def requested_fields(text: str | None) -> tuple[str, ...]:
    """The keys ``?fields=`` asks for (the summary without it); unknown ones are a 400."""
    if text is None or not text.strip():
        return SUMMARY
    wanted = tuple(dict.fromkeys(f.strip() for f in text.split(",") if f.strip()))
    unknown = [f for f in wanted if f not in KEYS]
    if unknown:
        raise ValidationError({"fields": [(f"unknown field(s) {', '.join(unknown[:10])[:200]}; "
                                           f"choose from {', '.join(KEYS)}")]})
    return wanted


def topics_for(query: QuerySet[Topic], fields: tuple[str, ...]) -> QuerySet[Topic]:
    """Without maps the rows are read without them too (a map column is megabytes)."""
    if MAP in fields:
        return query
    return query.defer("replica_map", "manual_replica_map").annotate(
        manual_flag=ExpressionWrapper(Q(manual_replica_map__isnull=False),
                                      output_field=BooleanField()))


def topic_fields(topic: Topic, fields: tuple[str, ...]) -> dict[str, Any]:
    if MAP in fields:
        shape = topic_describe(topic)
    else:
        shape = _summary(topic)
    return {k: shape[k] for k in fields}


def _summary(topic: Topic) -> dict[str, Any]:
    return {"name": topic.name, "resolution": topic.resolution, "reason": topic.reason,
            "partition_count": topic.partitions, "replication": topic.replication_factor,
            "ignore_rack_assignment": topic.ignore_rack_assignment,
            "min_lrs": topic.min_lrs, "max_lag": topic.max_lag,
            "unclean_leader_election": topic.unclean_leader_election,
            "manual": topic.manual_flag}


def within_budget(page: list[Topic], fields: tuple[str, ...]) -> list[Topic]:
    """The page's first topics whose maps sum to at most the budget (one at least)."""
    if MAP not in fields:
        return page
    kept: list[Topic] = []
    total = 0
    for topic in page:
        total += topic.partitions
        if kept and total > MAX_PAGE_PARTITIONS:
            break
        kept.append(topic)
    return kept
