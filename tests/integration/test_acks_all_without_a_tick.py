"""An acks=all write to an idle partition commits in its own unit of work: its followers fetch
there (as the core says), so it is acknowledged without any tick of the cluster or its shard,
and only once the LRS really holds it (issue 22)."""
from __future__ import annotations

import pytest

from cluster.adapters import hot_state, shards
from cluster.testing.invariants import InvariantChecker
from cluster.services import replication, topic_create
from cluster.services.records import records_produce_and_wait, records_produce_outcome
from cluster.services.waiting import LocalQueue
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture(params=[1, 4], ids=["one-shard", "four-shards"])
def small(request, redis_url, settings, monkeypatch):
    """``small`` (one partition, replication 3) beside a busier topic, replicated, idle;
    ``calls`` then counts every tick anyone asks for."""
    settings.REPLICATION_SHARDS = request.param
    # Slow machines must not drop a silent follower from the LRS mid-test.
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 600
    monkeypatch.setattr(shards, "BLOCK", 4)
    register_spus(0, 1, 2, 3, online=True)
    topic_create(name="small", partitions=1, replication=3)
    topic_create(name="orders", partitions=16, replication=3)
    replication.replication_tick(dispatch=LocalQueue())
    checker = InvariantChecker()
    checker.check(hot_state.load().state)
    calls: list[str] = []
    for name in ("replication_tick", "replication_coordinate", "replication_shard_tick"):
        real = getattr(replication, name)
        monkeypatch.setattr(replication, name, _counting(calls, name, real))
    return calls, checker


def _counting(calls: list[str], name: str, real):
    def counted(*args, **kwargs):
        calls.append(name)
        return real(*args, **kwargs)
    return counted


def test_an_acks_all_write_to_an_idle_topic_is_acknowledged_without_any_tick(small):
    calls, checker = small
    outcome = records_produce_and_wait(topic="small", acks="all", values=["v"], wait_s=5)
    assert outcome.state == "acknowledged", outcome
    assert calls == []
    rs = hot_state.load().state.replica_sets[("small", 0)]
    # Committed per the core: the HW passed it and every LRS member holds the same record.
    assert rs.hw == 1 and sorted(rs.lrs) == sorted(rs.replicas)
    assert {s: rs.replica[s].log for s in rs.replicas} == {s: [outcome.first_id]
                                                          for s in rs.replicas}
    # The round is a tick's: every follower fetched and learned the HW in it.
    assert {s: rs.replica[s].hw for s in rs.replicas} == {s: 1 for s in rs.replicas}
    checker.check(hot_state.load().state)
    assert records_produce_outcome(outcome_id=outcome.first_id)["state"] == "acknowledged"


def test_the_immediate_fetch_touches_only_the_written_partition(small):
    calls, _ = small
    before = hot_state.client().hgetall(hot_state.sets_key("orders"))
    records_produce_and_wait(topic="small", acks="all", count=2, wait_s=5)
    assert hot_state.client().hgetall(hot_state.sets_key("orders")) == before
    assert calls == []


def test_a_write_whose_follower_stopped_is_not_acknowledged_by_the_immediate_fetch(small):
    calls, checker = small
    rs = hot_state.load().state.replica_sets[("small", 0)]
    stopped = rs.followers()[0]
    hot_state.kill(stopped)
    outcome = records_produce_and_wait(topic="small", acks="all", count=1, wait_s=0.3)
    assert outcome.state == "pending"
    rs = hot_state.load().state.replica_sets[("small", 0)]
    # The stopped follower is still in the LRS and lacks the record: nothing is committed.
    assert stopped in rs.lrs and rs.replica[stopped].leo == 0 and rs.hw == 0
    hot_state.revive(stopped)
    for _ in range(3):
        replication.replication_tick(dispatch=LocalQueue())
    assert records_produce_outcome(outcome_id=outcome.first_id)["state"] == "acknowledged"
    checker.check(hot_state.load().state)
