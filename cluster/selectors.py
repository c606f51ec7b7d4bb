"""Reads shared by pages, the API and commands."""
from __future__ import annotations

import json
import operator
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from itertools import chain, compress

from django.db import connection
from django.db.models import Count, F, Func, IntegerField, Q, QuerySet, TextField
from django.db.models.functions import Cast

from cluster.models import Event, Partition, Spu, SpuGroup, Topic
from webapp.perf import gc_paused


def topic_describe(topic: Topic) -> dict[str, object]:
    """The shape of ``topic describe --json``: the file format plus status."""
    return {"name": topic.name, "resolution": topic.resolution, "reason": topic.reason,
            "partitions": [{"id": i, "replicas": r} for i, r in enumerate(topic.replica_map)],
            "partition_count": topic.partitions, "replication": topic.replication_factor,
            "ignore_rack_assignment": topic.ignore_rack_assignment,
            "min_lrs": topic.min_lrs, "max_lag": topic.max_lag,
            "manual": topic.is_manual}


def spu_describe(spu: Spu) -> dict[str, object]:
    return {"id": spu.id, "type": spu.spu_type, "rack": spu.rack or None,
            "public": spu.public_endpoint, "private": spu.private_endpoint,
            "resolution": spu.resolution,
            "group": spu.group.name if spu.group_id else None}


def partition_rows(topic_name: str | None = None) -> list[dict[str, object]]:
    query = Partition.objects.select_related("topic").order_by("topic__name", "index")
    if topic_name:
        query = query.filter(topic__name=topic_name)
    return [{"topic": p.topic.name, "partition": p.index, "leader": p.leader,
             "replicas": p.replicas, "lrs": p.lrs, "resolution": p.resolution,
             "hw": p.hw, "leo": p.leo} for p in query]


# --- Dashboard reads -------------------------------------------------------
# One pass over every partition row feeds the overview, SPU page, heatmaps and
# health, so a page costs a handful of queries whatever the cluster size.

NO_RACK = "(no rack)"
NOT_PROVISIONED = "not-provisioned"


@dataclass
class SpuStats:
    """Counts for one SPU; ``leaders`` are actual leaders (partition status)."""
    id: int
    rack: str
    spu_type: str
    resolution: str
    group: str | None = None
    leaders: int = 0
    replicas: int = 0
    preferred: int = 0
    preferred_leading: int = 0
    leader_skew: float | None = None
    replica_skew: float | None = None

    @property
    def followers(self) -> int:
        """Replicas it hosts without leading them (leaderless ones included)."""
        return self.replicas - self.leaders

    @property
    def preferred_share(self) -> float | None:
        return self.preferred_leading / self.preferred if self.preferred else None


@dataclass
class TopicStats:
    partitions: int = 0
    leaderless: int = 0
    under_replicated: int = 0
    preferred_leading: int = 0

    @property
    def preferred_share(self) -> float | None:
        return self.preferred_leading / self.partitions if self.partitions else None


@dataclass
class ClusterStats:
    spus: dict[int, SpuStats]
    topics: dict[int, TopicStats]
    partitions: int = 0
    leaderless: int = 0
    under_replicated: int = 0
    replicas: int = 0
    # failover[failed][taker] = leaders ``taker`` would inherit; taker None = none left
    failover: dict[int, dict[int | None, int]] = field(default_factory=dict)

    def racks(self) -> dict[str, list[SpuStats]]:
        racks: dict[str, list[SpuStats]] = defaultdict(list)
        for spu in sorted(self.spus.values(), key=lambda s: s.id):
            racks[spu.rack or NO_RACK].append(spu)
        return dict(sorted(racks.items()))


def skew(count: int, average: float) -> float | None:
    """(count - avg) / avg: the balance measure the skew columns show."""
    return (count - average) / average if average else None


@dataclass
class PartitionColumns:
    """Partition rows as parallel columns, sorted by topic: the shape counters want."""
    topic_ids: list[int]
    leaders: list[int | None]
    replicas: list[list[int]]
    lrs: list[list[int]]

    @property
    def preferred(self) -> list[int | None]:
        return [r[0] if r else None for r in self.replicas]

    def topic_runs(self) -> Iterator[tuple[int, int, int]]:
        """(topic id, start, end) of each topic's contiguous rows."""
        start = 0
        ids = self.topic_ids
        for i in range(1, len(ids) + 1):
            if i == len(ids) or ids[i] != ids[start]:
                yield ids[start], start, i
                start = i


def partition_columns(topic_ids: list[int] | None = None) -> PartitionColumns:
    """Every partition's topic, leader, replicas and LRS in one raw query.

    Raw SQL with JSON as text, decoded in one json.loads per column: the
    ORM's per-row JSONField decoding costs ~5x more at 50,000 partitions.
    """
    if topic_ids is not None and not topic_ids:
        return PartitionColumns([], [], [], [])
    quote = connection.ops.quote_name
    # SQLite already stores JSON as text; other databases need the cast.
    text = "{}" if connection.vendor == "sqlite" else "CAST({} AS TEXT)"
    sql = (f"SELECT topic_id, leader, {text.format('replicas')}, {text.format('lrs')} "
           f"FROM {quote(Partition._meta.db_table)}")
    if topic_ids is not None:
        sql += f" WHERE topic_id IN ({', '.join(['%s'] * len(topic_ids))})"
    with connection.cursor() as cursor, gc_paused():
        cursor.execute(sql + " ORDER BY topic_id, " + quote("index"), topic_ids or [])
        rows = cursor.fetchall()
        return PartitionColumns([r[0] for r in rows], [r[1] for r in rows],
                                _decode_all(r[2] for r in rows),
                                _decode_all(r[3] for r in rows))


def _decode_all(texts: Iterable[str | None]) -> list[list[int]]:
    return json.loads("[" + ",".join(t or "[]" for t in texts) + "]")


def successor(replicas: list[int], lrs: list[int], failed: int) -> int | None:
    """Who leads if ``failed`` goes down: the next LRS member in replica order (001).

    001 picks the LRS follower with the smallest lag; the store keeps no
    per-follower lag, so replica order breaks the tie as the leader order does.
    """
    for spu_id in replicas:
        if spu_id != failed and spu_id in lrs:
            return spu_id
    return None


def cluster_stats(with_failover: bool = False,
                  cols: PartitionColumns | None = None) -> ClusterStats:
    spus = {sid: SpuStats(sid, rack, kind, res, group) for sid, rack, kind, res, group
            in Spu.objects.order_by("id").values_list(
                "id", "rack", "spu_type", "resolution", "group__name")}
    cols = cols if cols is not None else partition_columns()
    with gc_paused():
        stats = ClusterStats(spus=spus, topics=_topic_stats(cols))
        stats.partitions = len(cols.leaders)
        stats.leaderless = sum(t.leaderless for t in stats.topics.values())
        stats.under_replicated = sum(t.under_replicated for t in stats.topics.values())
        stats.replicas = sum(map(len, cols.replicas))
        _count_spus(stats, cols)
        if with_failover:
            stats.failover = _failover(cols)
    _set_skews(stats)
    return stats


def _topic_stats(cols: PartitionColumns) -> dict[int, TopicStats]:
    # Per topic run, map/sum over slices: C loops instead of a Python loop per row.
    preferred = cols.preferred
    topics: dict[int, TopicStats] = {}
    for topic_id, a, b in cols.topic_runs():
        leaders = cols.leaders[a:b]
        topics[topic_id] = TopicStats(
            partitions=b - a, leaderless=leaders.count(None),
            under_replicated=sum(map(operator.lt, map(len, cols.lrs[a:b]),
                                     map(len, cols.replicas[a:b]))),
            preferred_leading=sum(map(operator.eq, preferred[a:b], leaders)))
    return topics


def _count_spus(stats: ClusterStats, cols: PartitionColumns) -> None:
    # Counters over flattened columns run in C; a per-replica Python loop
    # would dominate the heatmap page at 150,000 replicas.
    preferred = cols.preferred
    hosted = Counter(chain.from_iterable(cols.replicas))
    leading = Counter(cols.leaders)
    preferring = Counter(preferred)
    preferred_leading = Counter(compress(cols.leaders, map(operator.eq, preferred, cols.leaders)))
    for spu_id, spu in stats.spus.items():
        spu.replicas, spu.leaders = hosted[spu_id], leading[spu_id]
        spu.preferred, spu.preferred_leading = preferring[spu_id], preferred_leading[spu_id]


def _failover(cols: PartitionColumns) -> dict[int, dict[int | None, int]]:
    # Fast path for the usual case (the preferred leader leads, its next
    # replica is in the LRS); successor() handles everything else.
    moves = Counter([
        (leader, replicas[1] if (replicas[0] == leader and len(replicas) > 1
                                 and replicas[1] in lrs)
         else successor(replicas, lrs, leader))
        for leader, replicas, lrs in zip(cols.leaders, cols.replicas, cols.lrs)
        if leader is not None])
    matrix: dict[int, dict[int | None, int]] = defaultdict(dict)
    for (failed, taker), count in moves.items():
        matrix[failed][taker] = count
    return dict(matrix)


def replica_counts_by_topic(cols: PartitionColumns) -> dict[tuple[int, int], int]:
    """(topic id, SPU id) -> replicas of that topic on that SPU."""
    counts: dict[tuple[int, int], int] = {}
    for topic_id, a, b in cols.topic_runs():
        for spu_id, n in Counter(chain.from_iterable(cols.replicas[a:b])).items():
            counts[(topic_id, spu_id)] = n
    return counts


def _set_skews(stats: ClusterStats) -> None:
    if not stats.spus:
        return
    n = len(stats.spus)
    avg_leaders = sum(s.leaders for s in stats.spus.values()) / n
    avg_replicas = sum(s.replicas for s in stats.spus.values()) / n
    for spu in stats.spus.values():
        spu.leader_skew = skew(spu.leaders, avg_leaders)
        spu.replica_skew = skew(spu.replicas, avg_replicas)


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
    not_provisioned = sum(n for res, n in topics_by_resolution.items() if res != "Provisioned")
    checks = [
        (by_res.get("Offline", 0), "SPU{s} offline", "/spus/?resolution=Offline", "bad"),
        (by_res.get("Init", 0), "SPU{s} registered but never connected (Init)",
         "/spus/?resolution=Init", "warn"),
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


def topics_filtered(search: str = "", resolution: str = ""):
    query = Topic.objects.order_by("name")
    if search:
        query = query.filter(name__icontains=search)
    if resolution == NOT_PROVISIONED:
        query = query.exclude(resolution="Provisioned")
    elif resolution:
        query = query.filter(resolution=resolution)
    return query


class JsonArrayLength(Func):
    """Length of a JSON array column, in SQL (SQLite json_array_length, PostgreSQL jsonb_)."""
    function = "json_array_length"
    output_field = IntegerField()

    def as_postgresql(self, compiler: Any, connection: Any, **extra: Any) -> Any:
        return self.as_sql(compiler, connection, function="jsonb_array_length", **extra)


def _with_lengths(query: QuerySet[Partition]) -> QuerySet[Partition]:
    return query.annotate(lrs_len=JsonArrayLength("lrs"), replicas_len=JsonArrayLength("replicas"))


def topic_stats_for(topic_ids: list[int]) -> dict[int, TopicStats]:
    """Per-topic partition health for one page of the topic list: one aggregate query."""
    rows = (_with_lengths(Partition.objects.filter(topic_id__in=topic_ids))
            .order_by().values("topic_id")
            .annotate(n=Count("id"), leaderless=Count("id", filter=Q(leader__isnull=True)),
                      under=Count("id", filter=Q(lrs_len__lt=F("replicas_len"))),
                      # initial_leader is the first replica (the preferred leader).
                      preferred=Count("id", filter=Q(leader=F("initial_leader")))))
    return {r["topic_id"]: TopicStats(r["n"], r["leaderless"], r["under"], r["preferred"])
            for r in rows}


def topic_counts_by_resolution() -> dict[str, int]:
    return dict(Topic.objects.order_by("resolution").values("resolution")
                .annotate(n=Count("id")).values_list("resolution", "n"))


def partitions_filtered(*, topic: str = "", spu: int | None = None,
                        leaderless: bool = False, under_replicated: bool = False,
                        resolution: str = "") -> Sequence[int]:
    """Ids of matching partitions in list order (topic name, index).

    Filters stay in SQL and come back as a lazy id query the paginator
    slices; only "SPU among the replicas" is checked in Python.
    """
    query = Partition.objects.order_by("topic__name", "index")
    if topic:
        query = query.filter(topic__name=topic)
    if leaderless:
        query = query.filter(leader__isnull=True)
    if resolution:
        query = query.filter(resolution=resolution)
    if under_replicated:
        query = _with_lengths(query).filter(lrs_len__lt=F("replicas_len"))
    ids = query.values_list("id", flat=True)
    if spu is None:
        return ids
    rows = query.annotate(replicas_text=Cast("replicas", TextField())).values_list(
        "id", "replicas_text")
    with gc_paused():
        rows = list(rows)
        replicas = _decode_all(r[1] for r in rows)
        return [row[0] for row, reps in zip(rows, replicas) if spu in reps]


def partitions_by_ids(ids: list[int]) -> list[Partition]:
    by_id = Partition.objects.select_related("topic").in_bulk(ids)
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


def group_describe(group) -> dict[str, object]:
    """An SPU group as `spg list --json` and the API show it."""
    return {"name": group.name, "replicas": group.replicas, "min_id": group.min_id,
            "rack": group.rack or None, "storage_size": group.storage_size,
            "resolution": group.resolution, "reason": group.reason,
            "spus": sorted(group.spus.values_list("id", flat=True))}
