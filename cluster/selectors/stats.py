"""Cluster, SPU and topic counts for the overview, SPU page, heatmaps and health.

They read the partition counts the store keeps beside the rows (TopicSpuCount,
FailoverCount: cluster/projections/aggregates.py), so a page costs a handful of
queries over a few thousand count rows whatever the number of partitions.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain
from typing import NamedTuple

from django.conf import settings
from django.db import connection
from django.db.models import Sum

from cluster.adapters import hot_state
from cluster.adapters.redis_keys import REDIS_DOWN
from cluster.core.spus import SpuResolution
from cluster.core.tally import NO_TAKER, TOPIC_TOTAL
from cluster.models import FailoverCount, Partition, Spu, TopicSpuCount
from cluster.selectors.sql import decode_all
from cluster.perf import gc_paused


NO_RACK = "(no rack)"


class EvenRange(NamedTuple):
    """Counts per SPU when a total is spread as evenly as whole numbers allow."""
    low: int
    high: int
    average: float

    def beyond(self, count: int) -> float:
        """How far ``count`` lies outside the range, as a share of the average."""
        outside = max(0, count - self.high, self.low - count)
        return outside / self.average if self.average else 0.0


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
    # The fewest and most any SPU can hold when the cluster is as even as its
    # partitions allow (20 leaders on 12 SPUs: 1 to 2); skew inside it is no fault.
    leader_range: EvenRange | None = None
    replica_range: EvenRange | None = None
    loop_killed: bool = False  # its loop stopped; the store says Online until the heartbeat lapses

    @property
    def down(self) -> bool:
        """It serves none of its replicas: offline, never connected, or its loop killed."""
        return self.resolution != SpuResolution.ONLINE.value or self.loop_killed

    @property
    def state_label(self) -> str:
        """Why it serves nothing, in a word or two; empty while it serves."""
        if self.resolution != SpuResolution.ONLINE.value:
            return self.resolution.lower()
        return "loop killed" if self.loop_killed else ""

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

    @property
    def preferred_share(self) -> float | None:
        """Share of partitions led by their preferred leader (their first replica)."""
        led = sum(s.preferred_leading for s in self.spus.values())
        return led / self.partitions if self.partitions else None

    @property
    def spus_online(self) -> int:
        return sum(s.resolution == SpuResolution.ONLINE.value for s in self.spus.values())

    def spus_where(self, *, resolution: str = "", rack: str = "") -> list[SpuStats]:
        """SPUs in id order, filtered by resolution and rack (empty: any)."""
        return [spu for _, spu in sorted(self.spus.items())
                if (not resolution or spu.resolution == resolution)
                and (not rack or (spu.rack or "") == rack)]

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
                                decode_all(r[2] for r in rows),
                                decode_all(r[3] for r in rows))


def cluster_stats(with_failover: bool = False) -> ClusterStats:
    """Every count from the maintained partition counts (cluster/projections/aggregates.py):
    a few thousand count rows, whatever the number of partitions."""
    spus = {sid: SpuStats(sid, rack, kind, res, group) for sid, rack, kind, res, group
            in Spu.objects.order_by("id").values_list(
                "id", "rack", "spu_type", "resolution", "group__name")}
    for spu_id in killed_loops() & spus.keys():
        spus[spu_id].loop_killed = True
    stats = ClusterStats(spus=spus, topics=topic_stats_for(None))
    stats.partitions = sum(t.partitions for t in stats.topics.values())
    stats.leaderless = sum(t.leaderless for t in stats.topics.values())
    stats.under_replicated = sum(t.under_replicated for t in stats.topics.values())
    stats.replicas = _count_spus(stats)
    if with_failover:
        stats.failover = failover_matrix()
    _set_skews(stats)
    return stats


def down_spu_ids() -> set[int]:
    """SPUs that serve nothing: not Online in the store, or with their loop killed."""
    stored = Spu.objects.exclude(resolution=SpuResolution.ONLINE.value)
    return set(stored.values_list("id", flat=True)) | killed_loops()


def killed_loops() -> set[int]:
    """SPUs whose loop was killed (the hot state's set); none when Redis cannot say."""
    # Tests that start no Redis switch live updates off: they run no SPU loop to kill,
    # and must not read whatever Redis answers on the default URL.
    if not settings.LIVE_UPDATES:
        return set()
    try:
        return hot_state.killed()
    except REDIS_DOWN:
        return set()


def _count_spus(stats: ClusterStats) -> int:
    """Set each SPU's counts; return the replicas counted on every SPU, registered or not."""
    rows = (TopicSpuCount.objects.filter(spu__gte=0).order_by().values("spu")
            .annotate(replicas=Sum("replicas"), leaders=Sum("leaders"),
                      preferred=Sum("preferred"), preferred_leading=Sum("preferred_leading")))
    total = 0
    for row in rows:
        total += row["replicas"]
        spu = stats.spus.get(row["spu"])
        if spu is not None:
            spu.replicas, spu.leaders = row["replicas"], row["leaders"]
            spu.preferred, spu.preferred_leading = row["preferred"], row["preferred_leading"]
    return total


def failover_matrix() -> dict[int, dict[int | None, int]]:
    """failover[failed][taker] = leaders ``taker`` would inherit; taker None = none left."""
    matrix: dict[int, dict[int | None, int]] = defaultdict(dict)
    for failed, taker, n in FailoverCount.objects.filter(partitions__gt=0).values_list(
            "failed", "taker", "partitions"):
        matrix[failed][None if taker == NO_TAKER else taker] = n
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
    leader_range = even_range(sum(s.leaders for s in stats.spus.values()), n)
    replica_range = even_range(sum(s.replicas for s in stats.spus.values()), n)
    for spu in stats.spus.values():
        spu.leader_skew = skew(spu.leaders, avg_leaders)
        spu.replica_skew = skew(spu.replicas, avg_replicas)
        spu.leader_range, spu.replica_range = leader_range, replica_range


def even_range(total: int, spus: int) -> EvenRange:
    return EvenRange(total // spus, -(-total // spus), total / spus)


def topic_stats_for(topic_ids: list[int] | None) -> dict[int, TopicStats]:
    """Per-topic partition health from the maintained counts (None: every topic)."""
    rows = TopicSpuCount.objects.filter(spu=TOPIC_TOTAL)
    if topic_ids is not None:
        rows = rows.filter(topic_id__in=topic_ids)
    return {pk: TopicStats(n, leaderless, under, preferred) for pk, n, leaderless, under, preferred
            in rows.values_list("topic_id", "partitions", "leaderless", "under_replicated",
                                "preferred_leading")}


def replica_counts_for(topic_ids: list[int]) -> dict[tuple[int, int], int]:
    """(topic id, SPU id) -> replicas of that topic on that SPU, from the maintained counts."""
    return {(topic, spu): n for topic, spu, n in TopicSpuCount.objects.filter(
        topic_id__in=topic_ids, spu__gte=0, replicas__gt=0).values_list(
        "topic_id", "spu", "replicas")}


def topic_spu_counts(topic_id: int) -> dict[int, tuple[int, int]]:
    """SPU id -> (partitions it is preferred leader of, other replicas it hosts) in one
    topic: the totals of its replica map by rack, from the maintained counts."""
    return {spu: (preferred, replicas - preferred) for spu, preferred, replicas in
            TopicSpuCount.objects.filter(topic_id=topic_id, spu__gte=0, replicas__gt=0)
            .values_list("spu", "preferred", "replicas")}
