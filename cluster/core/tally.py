"""Counts of partitions per topic, per (topic, SPU) and per failover move, as sums of
what each partition contributes, so a change is counted by subtracting what its rows
contributed before and adding what they contribute after.

A partition contributes, from its replicas, leader and LRS alone:
- to its topic: one partition, leaderless if it has no leader, under-replicated if its
  LRS is smaller than its replicas, preferred-leading if its first replica leads;
- to each (topic, SPU): a replica per replica hosted, a leader if the SPU leads, a
  preferred partition if it is the first replica, and preferred-leading if both;
- to the cluster's failover matrix: (leader, who takes over if the leader fails).
"""
from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import chain, compress, groupby
from typing import NamedTuple

from cluster.core.replication.failover import successor

# The spu of a topic's own totals in the (topic, spu) cells; -1 is no SPU id (ids are >= 0).
TOPIC_TOTAL = -1
# The taker of a failover move when no LRS member is left to take over.
NO_TAKER = -1
FIELDS = ("partitions", "leaderless", "under_replicated", "replicas", "leaders", "preferred",
          "preferred_leading")
PARTITIONS, LEADERLESS, UNDER, REPLICAS, LEADERS, PREFERRED, PREFERRED_LEADING = range(7)


class PartitionCounted(NamedTuple):
    """What of a partition row the counts read."""
    topic: int
    replicas: Sequence[int]
    leader: int | None
    lrs: Sequence[int]


@dataclass
class Tally:
    """cells[(topic, spu or TOPIC_TOTAL)] = the FIELDS' counts; failover[(failed, taker)]."""
    cells: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    failover: Counter[tuple[int, int]] = field(default_factory=Counter)

    def add(self, other: Tally, sign: int = 1) -> None:
        for key, counts in other.cells.items():
            mine = self.cells.setdefault(key, [0] * len(FIELDS))
            for i, n in enumerate(counts):
                mine[i] += sign * n
        for key, n in other.failover.items():
            self.failover[key] += sign * n

    def nonzero(self) -> Tally:
        """The same counts without the cells and moves that sum to nothing."""
        return Tally({k: v for k, v in self.cells.items() if any(v)},
                     Counter({k: n for k, n in self.failover.items() if n}))


def tally_of(rows: Iterable[PartitionCounted]) -> Tally:
    """The counts of these rows; topic by topic, with counters that run in C (a per-replica
    Python loop would cost seconds at 100,000 partitions)."""
    by_topic: dict[int, list[PartitionCounted]] = {}
    for row in rows:
        by_topic.setdefault(row.topic, []).append(row)
    tally = Tally()
    for topic, members in by_topic.items():
        _count_topic(tally, topic, [r.replicas for r in members], [r.leader for r in members],
                     [r.lrs for r in members])
    return tally


def tally_of_columns(topics: Sequence[int], replicas: Sequence[Sequence[int]],
                     leaders: Sequence[int | None], lrs: Sequence[Sequence[int]]) -> Tally:
    """The counts of rows given as parallel columns sorted by topic (a rebuild's shape)."""
    tally, start = Tally(), 0
    # Runs of one topic found in C (groupby), not by comparing ids row by row in Python.
    for topic, run in groupby(topics):
        end = start + len(list(run))
        _count_topic(tally, topic, replicas[start:end], leaders[start:end], lrs[start:end])
        start = end
    return tally


def tally_of_topic(topic: int, replicas: Sequence[Sequence[int]],
                   leaders: Sequence[int | None], lrs: Sequence[Sequence[int]]) -> Tally:
    """The counts of one topic's rows given as columns by partition (a new topic's)."""
    tally = Tally()
    _count_topic(tally, topic, replicas, leaders, lrs)
    return tally


def _count_topic(tally: Tally, topic: int, replicas: Sequence[Sequence[int]],
                 leaders: Sequence[int | None], lrs: Sequence[Sequence[int]]) -> None:
    leaders = list(leaders)
    preferred = (list(map(operator.itemgetter(0), replicas)) if _all_at_least(replicas, 1)
                 else [r[0] if r else None for r in replicas])
    leading = Counter(leaders)
    # A new topic's preferred leaders all lead: its three leader counts are one count.
    preferred_lead = leaders == preferred
    by_preference = leading if preferred_lead else Counter(preferred)
    leading_preferred = Counter(leading if preferred_lead else
                                compress(leaders, map(operator.eq, preferred, leaders)))
    leading_preferred.pop(None, None)
    total = tally.cells.setdefault((topic, TOPIC_TOTAL), [0] * len(FIELDS))
    total[PARTITIONS] += len(replicas)
    total[LEADERLESS] += leaders.count(None)
    total[UNDER] += sum(map(operator.lt, map(len, lrs), map(len, replicas)))
    total[PREFERRED_LEADING] += sum(leading_preferred.values())
    for index, counter in ((REPLICAS, Counter(chain.from_iterable(replicas))),
                           (LEADERS, leading), (PREFERRED, by_preference),
                           (PREFERRED_LEADING, leading_preferred)):
        for spu, n in counter.items():
            if spu is not None:
                tally.cells.setdefault((topic, spu), [0] * len(FIELDS))[index] += n
    tally.failover.update(_moves(replicas, leaders, lrs, preferred_lead))


def _all_at_least(replicas: Sequence[Sequence[int]], size: int) -> bool:
    return not replicas or min(map(len, replicas)) >= size


def _moves(replicas: Sequence[Sequence[int]], leaders: Sequence[int | None],
           lrs: Sequence[Sequence[int]], preferred_lead: bool) -> Iterable[tuple[int, int]]:
    # A healthy topic (a new one: every preferred leader leads, every replica is in the
    # LRS) moves each leader to its second replica: pairs zipped in C, not a row loop.
    if (preferred_lead and _all_at_least(replicas, 2)
            and (lrs is replicas or list(lrs) == list(replicas))):
        return zip(leaders, map(operator.itemgetter(1), replicas))
    return _moves_row_by_row(replicas, leaders, lrs)


def _moves_row_by_row(replicas: Sequence[Sequence[int]], leaders: Sequence[int | None],
                      lrs: Sequence[Sequence[int]]) -> Iterable[tuple[int, int]]:
    # Fast path for the usual case (the preferred leader leads, its next replica is in
    # the LRS); successor() decides everything else.
    for leader, reps, live in zip(leaders, replicas, lrs):
        if leader is None:
            continue
        if reps and reps[0] == leader and len(reps) > 1 and reps[1] in live:
            yield leader, reps[1]
        else:
            taker = successor(reps, live, leader)
            yield leader, NO_TAKER if taker is None else taker
