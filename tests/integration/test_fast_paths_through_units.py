"""The busy tick's shortcuts, checked through real units of work, the set cache and Redis
(issue 33), through busy ticks, an SPU going offline and back, a stopped loop, acks=all
and acks=1 produces to single partitions, a preferred election and a topic created among
busy ones:

* every unit's ``changes`` with the steady index (the sets that stayed in it since the
  last save are not tested for a moved status) gives exactly what the general comparison
  of every saved set gives;
* every simulated producers' call (``produce_spread``: steady sets appended in runs) leaves
  the state, the actions and the outcomes the full rules leave on a copy of the state
  without the index.

The core's shortcuts are also proven by the lockstep schedules
(tests/unit/cluster/core/replication/test_steady_sets.py); this is the shell's side."""
from __future__ import annotations

import pytest

from cluster.adapters import hot_state
from cluster.core import replication
from cluster.core.replication import cluster_from_dict, cluster_to_dict
from cluster.engine import entries, unit
from cluster.engine.mirror import OffsetsMirror
from cluster.services import topic_create
from cluster.services.leaders import leader_elect_preferred
from cluster.services.outages import spu_offline, spu_online
from cluster.services.records import records_produce, topic_set_producer_rate
from cluster.services.replication import replication_tick
from cluster.services.waiting import LocalQueue
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


class Shadow:
    """``changes`` as the units call it, each call also compared with the general pass."""

    def __init__(self) -> None:
        self.calls = self.skipped = 0
        self.mismatches: list[str] = []
        self.where = ""

    def __call__(self, before, after, steady=None, sets=None):
        general = entries.changes(before, after)  # no index: every set tested
        stayed = 0 if steady is None else sum(
            1 for k in after if k in steady.keys and k not in steady.joined and k in before)
        fast = entries.changes(before, after, steady, sets)
        self.calls += 1
        self.skipped += stayed
        if fast != general:
            self.mismatches.append(f"{self.where}: fast {fast} general {general}")
        return fast


class FiguredShadow:
    """The offsets mirror's ``reserve`` as the units call it, once ``changes`` and the
    figured sets named the unit's moved and differing sets: the general pass over every
    summary the unit's save made (those of the sets it wrote as their figures made as
    read, ``summaries.Saved``) must name the same sets."""

    def __init__(self, shadow: Shadow) -> None:
        self.shadow, self.figured = shadow, 0
        self.real = OffsetsMirror.reserve

    def __call__(self, mirror, hot, saved):
        general = entries.changes(hot.before, dict(saved))
        self.figured += len(hot.figured)
        if (set(general.moved), set(general.differs)) != (set(hot.moved), set(hot.differs)):
            self.shadow.mismatches.append(
                f"{self.shadow.where}: figured {len(hot.figured)}, general {general} "
                f"fast {hot.moved} {hot.differs}")
        return self.real(mirror, hot, saved)


class ProducersShadow:
    """``produce_spread`` as the simulated producers call it, each call first played on a
    copy of the state without the steady index (every key through the full rules)."""

    def __init__(self) -> None:
        self.real = replication.produce_spread
        self.calls = self.in_runs = 0
        self.mismatches: list[str] = []
        self.where = ""

    def __call__(self, state, keys, counts, acks, *, lost=None):
        twin = cluster_from_dict(cluster_to_dict(state))  # its index starts empty
        expected = self.real(twin, list(keys), list(counts), acks, lost=lost)
        self.in_runs += sum(1 for k in keys if k in state.steady.keys)
        got = self.real(state, keys, counts, acks, lost=lost)
        self.calls += 1
        if got != expected or cluster_to_dict(state) != cluster_to_dict(twin):
            self.mismatches.append(f"{self.where}: {keys} {counts}")
        return got


def tick(at: int) -> None:
    queue = LocalQueue()
    replication_tick(now=at, dispatch=queue)
    queue.drain()


@pytest.mark.parametrize("shadowed", ["changes", "producers"])
def test_the_units_shortcuts_with_the_steady_index_are_the_general_rules(redis_url,
                                                                          monkeypatch,
                                                                          shadowed):
    shadow = Shadow() if shadowed == "changes" else ProducersShadow()
    monkeypatch.setattr(*((unit, "changes") if shadowed == "changes"
                          else (replication, "produce_spread")), shadow)
    figured = FiguredShadow(shadow) if shadowed == "changes" else None
    if figured is not None:
        monkeypatch.setattr(OffsetsMirror, "reserve",
                            lambda mirror, hot, saved: figured(mirror, hot, saved))
    register_spus(0, 1, 2, 3, online=True)
    topic_create(name="orders", partitions=8, replication=3)
    topic_create(name="quiet", partitions=4, replication=2)
    topic_create(name="solo", partitions=2, replication=1)  # committed at the append
    topic_set_producer_rate(name="orders", rate=8.0)
    topic_set_producer_rate(name="solo", rate=2.0)
    at = 1_000

    def step(what: str, ticks: int = 2) -> None:
        nonlocal at
        for _ in range(ticks):
            at += 1_000
            shadow.where = f"{what} (t={at})"
            tick(at)

    step("busy ticks", 4)
    shadow.where = "acks=1 produce"
    records_produce(topic="orders", partition=3, count=2)
    step("after an acks=1 produce")
    shadow.where = "acks=all produce"
    records_produce(topic="quiet", partition=1, acks="all", count=2)
    step("after an acks=all produce")
    shadow.where = "SPU 1 offline"
    spu_offline(spu_id=1)
    step("SPU 1 offline", 3)
    shadow.where = "SPU 1 online"
    spu_online(spu_id=1)
    step("SPU 1 back", 4)
    shadow.where = "preferred election"
    leader_elect_preferred()
    step("after a preferred election", 3)
    hot_state.kill(2)
    step("SPU 2's loop stopped", 2)
    hot_state.revive(2)
    step("the loop back", 3)
    shadow.where = "a topic created among busy ones"
    topic_create(name="later", partitions=3, replication=3)
    topic_set_producer_rate(name="later", rate=3.0)
    step("three topics busy", 3)
    topic_set_producer_rate(name="orders", rate=0.0)
    step("orders stopped", 3)

    assert shadow.mismatches == []
    assert shadow.calls > 20
    # The fast path did pass over steady sets (in ``changes``, or as figures, which no
    # ``changes`` reads) / append to them in runs.
    if figured is not None:
        assert shadow.skipped > 20 and figured.figured > 50, (shadow.skipped, figured.figured)
    assert (shadow.skipped + figured.figured if figured is not None
            else shadow.in_runs) > 100
