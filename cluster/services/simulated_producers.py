"""The demo's simulated producers: each topic with a rate appends what is due at every tick.

With shards (cluster/adapters/shards.py) the coordinator keeps the accounting
(``producer_quotas``: what each topic is due, from its rate, and where its round robin
starts) and each shard task appends its partitions' share (``produce_quotas``). A
quota is per topic, not per partition: the coordinator's work and the shard tasks'
messages follow the number of topics (per partition, 100,000 entries were built,
split and sent through the broker every tick).
"""
from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from itertools import compress, repeat
from operator import getitem, itemgetter, methodcaller
from typing import NamedTuple

from cluster.adapters.hot_state import HotState, Producer, TopicTable
from cluster.core import replication as core
from cluster.core.replication import Acks, Action, Key, ProduceResult
from cluster.metrics.hooks import count_simulated

SIMULATED_ACKS = Acks.LEADER
# A producer that was stopped (no worker) does not make up for lost time in one burst.
MAX_CATCH_UP_MS = 5000
_TOPIC, _PARTITION = itemgetter(0), itemgetter(1)
_RATE, _LAST = methodcaller("get", "rate"), methodcaller("get", "last_ms")


def simulate_producers(hot: HotState, at: int, stopped: set[int]) -> list[Action]:
    """Each topic with a producer rate appends what is due since its last run: every
    topic's keys and shares end to end, in one call of the core (record ids go out in the
    same order as topic by topic; a call a topic cost each topic the core's bookkeeping of
    its marks, 50 ms a busy tick at 100,000 partitions over 100 topics)."""
    keys: list[Key] = []
    counts: list[int] = []
    for name, table in _running(hot):
        due = _due(hot, name, table, at)
        if due:
            quota = _advance(hot.producers[name], table, due)
            # The topic's keys beside their shares, both kept from tick to tick: at 5,000
            # topics of 4 partitions, building them a topic at a time was 8 ms a tick.
            keys += _topic_keys(name, quota.partitions)
            counts += _quota_shares(quota)
    return _append(hot, keys, counts, stopped) if keys else []


@lru_cache(maxsize=1 << 16)
def _topic_keys(name: str, partitions: int) -> tuple[Key, ...]:
    return tuple(zip(repeat(name), range(partitions)))


@lru_cache(maxsize=1 << 12)
def _quota_shares(quota: TopicQuota) -> tuple[int, ...]:
    return tuple(quota.shares())


class TopicQuota(NamedTuple):
    """A topic's records due this tick, spread round robin from partition ``start``."""
    records: int
    start: int
    partitions: int

    def share(self, partition: int) -> int:
        n, parts = self.records, self.partitions
        return n // parts + (1 if (partition - self.start) % parts < n % parts else 0)

    def shares(self) -> list[int]:
        """``share`` of every partition, in index order, built by slices (a method call per
        partition was a sixth of a busy tick's producers)."""
        n, parts, start = self.records, self.partitions, self.start
        out = [n // parts] * parts
        extra, end = n % parts, start + n % parts
        if extra:
            out[start:min(end, parts)] = [n // parts + 1] * (min(end, parts) - start)
            if end > parts:
                out[:end - parts] = [n // parts + 1] * (end - parts)
        return out


def producer_quotas(hot: HotState, at: int) -> dict[str, TopicQuota]:
    """What each topic's producer owes since its last run; advances the accounting."""
    quotas: dict[str, TopicQuota] = {}
    for name, table in _running(hot):
        due = _due(hot, name, table, at)
        if due and table["partitions"]:
            quotas[name] = _advance(hot.producers[name], table, due)
    return quotas


def records_due(quotas: dict[str, TopicQuota], keys: Iterable[Key]) -> int:
    """How many records the partitions ``keys`` are due (a shard's record ids to reserve)."""
    return sum(_shares_of(quotas, _quota_keys(quotas, keys)))


def produce_quotas(hot: HotState, quotas: dict[str, TopicQuota], stopped: set[int]
                   ) -> list[Action]:
    """Append, of each topic's records due, the loaded partitions' share."""
    keys = _quota_keys(quotas, hot.state.replica_sets)
    return _append(hot, keys, _shares_of(quotas, keys), stopped)


def _quota_keys(quotas: dict[str, TopicQuota], keys: Iterable[Key]) -> list[Key]:
    """The keys of a topic with a quota, in their order (the filter in C)."""
    keys = list(keys)
    return list(compress(keys, map(quotas.__contains__, map(_TOPIC, keys))))


def _shares_of(quotas: dict[str, TopicQuota], keys: list[Key]) -> list[int]:
    """Each key's share of its topic's quota (every key's topic has one)."""
    shares = {t: q.shares() for t, q in quotas.items()}
    try:
        # A share per key by two lookups in C, not a Python expression per key.
        return list(map(getitem, map(shares.__getitem__, map(_TOPIC, keys)),
                        map(_PARTITION, keys)))
    except IndexError:
        # A partition the quota did not count (added since it was made) gets its share
        # by rule.
        return [s[p] if p < len(s := shares[t]) else quotas[t].share(p) for t, p in keys]


def _running(hot: HotState) -> Iterable[tuple[str, TopicTable]]:
    """The topics whose producer ``_due`` must account, in the tables' order: those with a
    rate, and those whose producer ran at its last turn (``_due`` stops its clock). The
    others owe nothing and have nothing to stop; they are passed over in C, where asking
    each one was 5 ms of every tick at 10,000 idle topics."""
    topics, producers = hot.topics, hot.producers
    running = set(compress(topics, map(_RATE, topics.values())))
    if producers:
        running.update(compress(producers, map(_LAST, producers.values())))
    if len(running) == len(topics):
        return topics.items()
    return compress(topics.items(), map(running.__contains__, topics))


def _due(hot: HotState, name: str, table: TopicTable, at: int) -> int:
    """The records topic ``name``'s producer owes since its last run; advances its clock
    in ``HotState.producers`` (made once the topic has a rate: a topic that never had one
    has nothing to account)."""
    rate = table.get("rate") or 0.0
    producer = hot.producers.get(name)
    if producer is None:
        if not rate:
            return 0
        producer = hot.producers[name] = {}
    last = producer.get("last_ms") or at
    due = producer.get("carry", 0.0) + rate * min(at - last, MAX_CATCH_UP_MS) / 1000
    producer["last_ms"], producer["carry"] = (at, due - int(due)) if rate else (None, 0.0)
    return int(due)


def _advance(producer: Producer, table: TopicTable, n: int) -> TopicQuota:
    """The round robin's next ``n`` records: from where it stopped, which moves on."""
    parts = len(table["partitions"])
    start = producer.get("next", 0) % parts
    producer["next"] = (start + n) % parts
    return TopicQuota(n, start, parts)


def _append(hot: HotState, keys: list[Key], counts: list[int], stopped: set[int]
            ) -> list[Action]:
    """One produce per partition owed records (``counts`` aligned with ``keys``), all in
    one call of the core; a leader whose loop is stopped answers nothing (its records are
    lost, as a dead producer's), nor does a partition not loaded."""
    actions, outcomes = core.produce_spread(hot.state, keys, counts, SIMULATED_ACKS,
                                            lost=stopped)
    core.ledger.simulated(hot.state, SIMULATED_ACKS, outcomes.get(None, 0))
    for code, count in outcomes.items():
        count_simulated(ProduceResult(code is None, code), SIMULATED_ACKS, count)
    return actions
