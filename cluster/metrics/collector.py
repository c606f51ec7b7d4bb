"""The control room's series, built at scrape time (see the package docstring for why).

Per topic, per SPU (with its rack) and cluster-wide only: no per-partition
series, so a scrape's size follows SPUs and topics, not partitions.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import redis
from prometheus_client.core import (CounterMetricFamily, GaugeMetricFamily,
                                    HistogramMetricFamily, Metric)
from prometheus_client.registry import Collector

from cluster.adapters import hot_state
from cluster.core.replication import (INVALID_REQUEST, NOT_ENOUGH_REPLICAS, NOT_LEADER,
                                      UNKNOWN_TOPIC_OR_PARTITION)
from cluster.metrics import counters, tally
from cluster.metrics.exposition import Family
from cluster.metrics.figures import spu_figures, topic_figures
from cluster.services import tick_health

PREFIX = "controlroom_"
# Series that exist from the first scrape, so rate() and alerts see a 0, not nothing.
KNOWN = {"outcome": (tally.ELECTED, tally.NO_CANDIDATE),
         "acks": tuple(tally.ACKS_LABELS.values()),
         "step": tuple(tally.MOVE_STEPS.values()),
         "reason": (NOT_LEADER, NOT_ENOUGH_REPLICAS, UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST)}


class ControlRoomCollector(Collector):
    """Engine figures, counters and histograms (the per-topic and per-SPU gauges are
    ``figure_families``: they scale with the cluster and are written directly).

    What other apps add is given to it, not registered with it: ``moves_in_flight`` (the
    planner's moves started and not finished, summed) and ``families`` (self-healing's
    series), both read at every scrape. The metrics view builds it from the engine's
    fields of the same names (composition/bootstrap.py fills them)."""

    def __init__(self, *, moves_in_flight: Iterable[Callable[[], int]] = (),
                 families: Iterable[Callable[[], Iterable[Metric]]] = ()) -> None:
        self.moves_in_flight = tuple(moves_in_flight)
        self.families = tuple(families)

    def collect(self) -> Iterator[Metric]:
        # From the database: failed ticks are counted there, Redis may be what fails them.
        yield CounterMetricFamily(PREFIX + "replication_tick_failures",
                                  "replication ticks that raised instead of committing",
                                  value=tick_health.failures_total())
        try:
            fields = counters.read()
            worker = hot_state.client().exists(hot_state.WORKER)
            last_commit = tick_health.last_commit_ms()
        except redis.exceptions.RedisError:
            yield _gauge("redis_up", "1 if the replication state's Redis answered this scrape", 0)
            return
        yield _gauge("redis_up", "1 if the replication state's Redis answered this scrape", 1)
        yield _gauge("worker_up", "1 while a Celery worker refreshes its heartbeat key", worker)
        yield _gauge("replication_tick_last_success_timestamp_seconds",
                     "when a replication tick last committed (Unix time; 0: none yet)",
                     (last_commit or 0) / 1000)
        yield from _counter_families(fields)
        yield _histogram("replication_tick_seconds", "time one replication tick took (load, step, "
                         "save, mirror; with shards, the coordinator's part)", counters.TICK, fields)
        yield _histogram("replication_shard_tick_seconds",
                         "time one shard's part of a sharded replication tick took",
                         counters.SHARD_TICK, fields)
        yield _gauge("plan_moves_in_flight", "replica moves of applied plans not yet finished",
                     sum(source() for source in self.moves_in_flight))
        for source in self.families:
            yield from source()


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(PREFIX + name, doc, value=value)


def figure_families() -> list[Family]:
    """Per topic and per SPU, from the store (figures.py)."""
    return _partition_families() + _spu_families()


def _partition_families() -> list[Family]:
    topics = topic_figures()
    docs = {"total": "partitions", "offline": "partitions without a leader",
            "under_replicated": "partitions whose LRS is smaller than their replica set"}
    return [Family(f"{PREFIX}partitions_{k}", doc, ("topic",),
                   [((t.topic,), getattr(t, k)) for t in topics]) for k, doc in docs.items()]


def _spu_families() -> list[Family]:
    spus = spu_figures()
    labels = [((str(s.spu), s.rack), s) for s in spus]
    return [
        Family(PREFIX + "spu_up", "1 if the SPU is Online, else 0", ("spu", "rack"),
               [(ids, int(s.up)) for ids, s in labels]),
        Family(PREFIX + "spu_leader_partitions", "partitions the SPU leads", ("spu", "rack"),
               [(ids, s.leaders) for ids, s in labels]),
        Family(PREFIX + "spu_replicas", "replicas the SPU hosts", ("spu", "rack"),
               [(ids, s.replicas) for ids, s in labels]),
        Family(PREFIX + "leader_imbalance_ratio",
               "share of the partitions the SPU is preferred leader of that it does not lead",
               ("spu",), [((str(s.spu),), s.imbalance) for s in spus]),
    ]


def _counter_families(fields: dict[str, float]) -> Iterator[Metric]:
    yield CounterMetricFamily(PREFIX + "lrs_shrinks", "partitions whose LRS lost members",
                              value=fields.get(tally.LRS_SHRINKS, 0))
    yield CounterMetricFamily(PREFIX + "lrs_expands", "partitions whose LRS gained members",
                              value=fields.get(tally.LRS_EXPANDS, 0))
    yield _labelled("elections", "elections ended, by outcome", "outcome", tally.ELECTIONS, fields)
    yield _labelled("records_produced", "records appended on a leader, by acks level", "acks",
                    tally.PRODUCED, fields)
    yield _labelled("produce_refused", "records refused at produce, by error code", "reason",
                    tally.REFUSED, fields)
    yield _labelled("replica_moves", "replica moves started, changing phase, completed, "
                    "rolled back", "step", tally.MOVES, fields)


def _labelled(name: str, doc: str, label: str, prefix: str,
              fields: dict[str, float]) -> CounterMetricFamily:
    family = CounterMetricFamily(PREFIX + name, doc, labels=[label])
    seen = {k[len(prefix):] for k in fields if k.startswith(prefix)}
    for value in sorted(seen | set(KNOWN[label])):
        family.add_metric([value], fields.get(prefix + value, 0))
    return family


def _histogram(name: str, doc: str, fields_of: counters.Histogram,
               fields: dict[str, float]) -> HistogramMetricFamily:
    buckets, running = [], 0.0
    for bound in [str(b) for b in counters.TICK_BUCKETS] + [counters.INF]:
        running += fields.get(fields_of.bucket + bound, 0)
        buckets.append((bound, running))
    return HistogramMetricFamily(PREFIX + name, doc, buckets=buckets,
                                 sum_value=fields.get(fields_of.sum, 0))
