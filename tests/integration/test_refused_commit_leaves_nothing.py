"""A produce whose commit is refused leaves no trace: its record values and its acks=all
ticket land with the unit of work's fenced commit, never before it (issue 32)."""
from __future__ import annotations

import pytest

from cluster.adapters import hot_state, metadata_log, shards
from cluster.adapters.lease import LeaseLost
from cluster.ports import bound_to_store
from cluster.models import Event, Partition
from cluster.services import records, replication, topic_create
from cluster.services.records import records_produce, records_produce_and_wait
from cluster.services.waiting import LocalQueue
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture(params=[(1, False), (4, False), (4, True)],
                ids=["one-shard", "four-shards", "four-shards-on-two-redis"])
def orders(request, redis_url, settings):
    settings.REPLICATION_SHARDS, spread = request.param
    if spread:  # shards 1 and 3 on the second server (cluster/adapters/hot_servers.py)
        request.getfixturevalue("two_hot_servers")
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 600  # no follower leaves the LRS meanwhile
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=2, replication=3)
    replication.replication_tick(dispatch=LocalQueue())


def _traces() -> dict[str, object]:
    """Everything a produce could leave: values, tickets, log entries, rows, events."""
    client = hot_state.client()
    with bound_to_store():
        values = client.hgetall(hot_state.values_key("orders"))
        tickets = sorted(k for k in client.scan_iter(match=hot_state.ticket_key(0)[:-1] + "*"))
        open_tickets = client.smembers(hot_state.key("tickets"))
        head = metadata_log.head()
    rows = list(Partition.objects.filter(topic__name="orders").order_by("index")
                .values_list("index", "hw", "leo"))
    return {"values": values, "tickets": tickets, "open tickets": open_tickets,
            "log head": head, "rows": rows, "events": Event.objects.count()}


@pytest.fixture
def fence_lost_mid_unit(monkeypatch):
    """Once the produce recorded its write in the step, another holder takes every lease
    the unit holds, so its commit is refused."""
    real, taken = records._record, []

    def record_then_lose_the_fence(*args, **kwargs):
        real(*args, **kwargs)
        for lock_key in map(hot_state.key, shards.every_lock()):
            hot_state.client().set(lock_key, "another holder's token")
            taken.append(lock_key)

    monkeypatch.setattr(records, "_record", record_then_lose_the_fence)
    yield
    assert taken, "the produce never recorded its write"
    hot_state.client().delete(*taken)


def test_a_produce_whose_commit_is_refused_leaves_no_value_ticket_entry_or_row(
        orders, fence_lost_mid_unit):
    before = _traces()
    with pytest.raises(LeaseLost):
        records_produce(topic="orders", partition=0, acks="all", values=["lost-1", "lost-2"])
    assert _traces() == before


def test_a_committed_produce_leaves_its_values_and_its_ticket(orders):
    before = _traces()
    outcome = records_produce_and_wait(topic="orders", partition=0, acks="all",
                                       values=["kept"], wait_s=5)
    assert outcome.state == "acknowledged", outcome
    after = _traces()
    assert list(after["values"].values()) == [b"kept"]
    assert len(after["tickets"]) == len(before["tickets"]) + 1
    assert records.records_produce_outcome(outcome_id=outcome.first_id)["state"] == \
        "acknowledged"
