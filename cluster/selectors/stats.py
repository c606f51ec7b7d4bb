"""Cluster, SPU and topic counts for the overview, SPU page, heatmaps and health.

One pass over every partition row feeds them all, so a page costs a handful
of queries whatever the cluster size.
"""
from __future__ import annotations

import operator
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import chain, compress
from typing import NamedTuple

from django.conf import settings
from django.db import connection
from django.db.models import Count, F, Q

from cluster.adapters import hot_state
from cluster.adapters.redis_keys import REDIS_DOWN
from cluster.core.replication.failover import successor
from cluster.core.spus import SpuResolution
from cluster.models import Partition, Spu
from cluster.selectors.sql import decode_all, with_lengths
from webapp.perf import gc_paused


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


def cluster_stats(with_failover: bool = False,
                  cols: PartitionColumns | None = None) -> ClusterStats:
    spus = {sid: SpuStats(sid, rack, kind, res, group) for sid, rack, kind, res, group
            in Spu.objects.order_by("id").values_list(
                "id", "rack", "spu_type", "resolution", "group__name")}
    for spu_id in killed_loops() & spus.keys():
        spus[spu_id].loop_killed = True
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
    leader_range = even_range(sum(s.leaders for s in stats.spus.values()), n)
    replica_range = even_range(sum(s.replicas for s in stats.spus.values()), n)
    for spu in stats.spus.values():
        spu.leader_skew = skew(spu.leaders, avg_leaders)
        spu.replica_skew = skew(spu.replicas, avg_replicas)
        spu.leader_range, spu.replica_range = leader_range, replica_range


def even_range(total: int, spus: int) -> EvenRange:
    return EvenRange(total // spus, -(-total // spus), total / spus)


def topic_stats_for(topic_ids: list[int]) -> dict[int, TopicStats]:
    """Per-topic partition health for one page of the topic list: one aggregate query."""
    rows = (with_lengths(Partition.objects.filter(topic_id__in=topic_ids))
            .order_by().values("topic_id")
            .annotate(n=Count("id"), leaderless=Count("id", filter=Q(leader__isnull=True)),
                      under=Count("id", filter=Q(lrs_len__lt=F("replicas_len"))),
                      # initial_leader is the first replica (the preferred leader).
                      preferred=Count("id", filter=Q(leader=F("initial_leader")))))
    return {r["topic_id"]: TopicStats(r["n"], r["leaderless"], r["under"], r["preferred"])
            for r in rows}
