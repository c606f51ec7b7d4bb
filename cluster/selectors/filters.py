"""Filtered, ordered reads behind the list pages and the API's list endpoints."""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from django.db.models import Count, F, Q

from cluster.models import Event, Partition, SpuGroup, Topic, TopicSpuCount
from cluster.core.tally import TOPIC_TOTAL
from cluster.selectors.shapes import TOPIC_MAPS
from cluster.selectors.sql import decode_all, with_lengths, with_texts
from cluster.perf import gc_paused
from cluster.core.topic_controller import TopicResolution


NOT_PROVISIONED = "not-provisioned"


def topics_filtered(search: str = "", resolution: str = ""):
    query = Topic.objects.order_by("name")
    if search:
        query = query.filter(name__icontains=search)
    if resolution == NOT_PROVISIONED:
        query = query.exclude(resolution=TopicResolution.PROVISIONED.value)
    elif resolution:
        query = query.filter(resolution=resolution)
    return query


def partitions_filtered(*, topic: str = "", spu: int | None = None,
                        leaderless: bool = False, under_replicated: bool = False,
                        resolution: str = "") -> Sequence[int]:
    """Ids of matching partitions in list order (topic name, index).

    Filters stay in SQL and come back as a lazy id query the paginator
    slices; only "SPU among the replicas" is checked in Python.
    """
    if not (spu is not None or leaderless or under_replicated or resolution):
        return TopicWalk(topic)
    if under_replicated and not (spu is not None or leaderless or resolution):
        return UnderReplicatedWalk(topic)
    query = Partition.objects.order_by("topic__name", "index")
    if topic:
        query = query.filter(topic__name=topic)
    if leaderless:
        query = query.filter(leader__isnull=True)
    if resolution:
        query = query.filter(resolution=resolution)
    if under_replicated:
        query = with_lengths(query).filter(lrs_len__lt=F("replicas_len"))
    ids = query.values_list("id", flat=True)
    if spu is None:
        return ids
    rows = with_texts(query, "replicas").values_list("id", "replicas_text")
    with gc_paused():
        rows = list(rows)
        replicas = decode_all(r[1] for r in rows)
        return [row[0] for row, reps in zip(rows, replicas) if spu in reps]


class TopicWalk(Sequence[int]):
    """Ids of every partition (or one topic's) in list order, without counting or sorting
    100,000 rows per page: topics in name order with their kept partition counts say
    which (topic, index range)s a slice covers, and the unique (topic, index) index
    reads each range. A topic's partitions are 0..n-1: created so, never removed alone."""

    def __init__(self, topic: str = "") -> None:
        counted = TopicSpuCount.objects.filter(spu=TOPIC_TOTAL, partitions__gt=0)
        if topic:
            counted = counted.filter(topic__name=topic)
        self.topics = list(counted.order_by("topic__name").values_list("topic_id", "partitions"))

    def count(self) -> int:
        return sum(n for _, n in self.topics)

    def __len__(self) -> int:
        return self.count()

    def __getitem__(self, item):  # type: ignore[override]
        if isinstance(item, int):
            return self[item:item + 1][0]
        start, stop = item.start or 0, self.count() if item.stop is None else item.stop
        ids: list[int] = []
        first = 0
        for pk, n in self.topics:
            if first >= stop:
                break
            if first + n > start:
                ids += (Partition.objects.filter(topic_id=pk, index__gte=max(start - first, 0),
                                                 index__lt=min(stop - first, n))
                        .order_by("index").values_list("id", flat=True))
            first += n
        return ids


class UnderReplicatedWalk(TopicWalk):
    """Ids of the under-replicated partitions in list order, without measuring 100,000
    rows' JSON arrays per page (a tenth of a second while the engine writes): the kept
    counts say how many each topic holds, and only the topics a slice reaches are read,
    in one query by the unique (topic, index) index."""

    def __init__(self, topic: str = "") -> None:
        rows = TopicSpuCount.objects.filter(spu=TOPIC_TOTAL, under_replicated__gt=0)
        if topic:
            rows = rows.filter(topic__name=topic)
        self.topics = list(rows.order_by("topic__name").values_list("topic_id",
                                                                    "under_replicated"))

    def __getitem__(self, item):  # type: ignore[override]
        if isinstance(item, int):
            return self[item:item + 1][0]
        start, stop = item.start or 0, self.count() if item.stop is None else item.stop
        reached: list[int] = []
        first = skipped = 0
        for pk, n in self.topics:
            if first >= stop:
                break
            if first + n > start:
                reached.append(pk)
            else:
                skipped += n
            first += n
        if not reached:
            return []
        order = {pk: i for i, pk in enumerate(reached)}
        rows = with_lengths(Partition.objects.filter(topic_id__in=reached)).filter(
            lrs_len__lt=F("replicas_len")).values_list("topic_id", "index", "id")
        rows = sorted(rows, key=lambda r: (order[r[0]], r[1]))
        return [r[2] for r in rows[start - skipped:stop - skipped]]


def topics_on_spus(spu_ids: list[int]) -> dict[int, list[str]]:
    """SPU id -> names of the topics with a replica on it (only SPUs that host any)."""
    found: dict[int, list[str]] = defaultdict(list)
    for spu, name in (TopicSpuCount.objects.filter(spu__in=spu_ids, replicas__gt=0)
                      .order_by("topic__name").values_list("spu", "topic__name")):
        found[spu].append(name)
    return dict(found)


def partition_keys(ids: list[int]) -> list[tuple[str, int]]:
    """(topic name, index) of the given partitions, in the given order."""
    keys = {pk: (name, index) for pk, name, index in
            Partition.objects.filter(id__in=ids).values_list("id", "topic__name", "index")}
    return [keys[i] for i in ids if i in keys]


def partitions_by_ids(ids: list[int]) -> list[Partition]:
    # A topic's replica map is one JSON value of every partition: decoding it per row
    # made a page of 100 rows of a 100,000-partition topic take half a minute.
    by_id = Partition.objects.select_related("topic").defer(*TOPIC_MAPS).in_bulk(ids)
    return [by_id[i] for i in ids if i in by_id]


def spu_groups_with_spus() -> list[SpuGroup]:
    return list(SpuGroup.objects.annotate(spu_count=Count("spus")).order_by("name"))


def events_filtered(*, actor: str = "", object_type: str = "", object_name: str = "",
                    operation: str = "", text: str = ""):
    query = Event.objects.all()
    for field_name, value in (("actor", actor), ("object_type", object_type),
                              ("object_name", object_name), ("operation", operation)):
        if value:
            query = query.filter(**{field_name: value})
    if text:
        query = query.filter(Q(object_name__icontains=text) | Q(result__icontains=text)
                             | Q(actor__icontains=text))
    return query


def event_facets() -> dict[str, list[str]]:
    """Distinct actors, object types and operations for the filter menus."""
    return {name: list(Event.objects.order_by(name).values_list(name, flat=True).distinct())
            for name in ("actor", "object_type", "operation")}
