"""The replication shell's tick: topology from the store, producers, retention, the lock."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from cluster.adapters import hot_state
from cluster.models import Partition
from cluster.services import spu_connect, spu_register, topic_create, topic_delete
from cluster.services.records import topic_set_producer_rate
from cluster.services.replication import replication_tick
from cluster.services.waiting import LocalQueue
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def tick(now: int | None = None) -> LocalQueue:
    queue = LocalQueue()
    replication_tick(now=now, dispatch=queue)
    queue.drain()
    return queue


def consume(*args: str) -> list[dict]:
    out = StringIO()
    call_command("consume", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def spus(redis_url):
    register_spus(0, 1, 2, online=True)


def test_a_topic_created_after_start_is_replicated_at_the_next_tick(spus):
    tick()
    topic_create(name="late", partitions=2, replication=2)
    assert "late" not in hot_state.replicated_topics()
    tick()
    assert "late" in hot_state.replicated_topics()
    assert set(Partition.objects.values_list("resolution", flat=True)) == {"Online"}


def test_a_deleted_topic_leaves_the_hot_state_and_redis(spus):
    topic_create(name="gone", partitions=2, replication=2)
    tick()
    topic_delete(name="gone")
    tick()
    assert "gone" not in hot_state.replicated_topics()
    assert not hot_state.client().exists(hot_state.sets_key("gone"))


def test_an_spu_registered_later_joins_offline_then_online_when_it_connects(spus):
    tick()
    spu_register(spu_id=7)
    tick()
    assert hot_state.load().state.spus[7] is False
    spu_connect(spu_id=7)
    tick()
    assert hot_state.load().state.spus[7] is True


def test_simulated_producers_append_their_rate_spread_over_partitions(spus):
    topic_create(name="sim", partitions=4, replication=1)
    topic_set_producer_rate(name="sim", rate=10)
    tick(now=1_000_000)
    tick(now=1_001_000)
    leos = [rs.leo for rs in hot_state.load().state.replica_sets.values()]
    assert sum(leos) == 10 and max(leos) - min(leos) <= 1


def test_an_idle_tick_rewrites_no_replica_set(spus):
    topic_create(name="idle", partitions=3, replication=3)
    tick()
    tick()
    before = hot_state.client().hgetall(hot_state.sets_key("idle"))
    tick()
    assert hot_state.client().hgetall(hot_state.sets_key("idle")) == before


def test_records_beyond_the_retention_are_compacted_but_offsets_stay(spus, settings):
    settings.REPLICATION_LOG_RETENTION = 5
    topic_create(name="short", partitions=1, replication=3)
    call_command("produce", "short", "--count", "30", "--acks", "all", stdout=StringIO())
    tick()
    records = consume("short")
    assert records[-1] == {"offset": 29, "value": "record-29"}
    assert 5 <= len(records) < 30 and records[0]["offset"] == 30 - len(records)


def test_partitions_past_the_retained_ids_budget_each_keep_their_share(spus, settings):
    # 10 partitions sharing 100 ids: 10 records each (then at most a compaction step more),
    # where the configured retention alone would keep every one of the 40.
    settings.REPLICATION_LOG_RETENTION = 1_000
    settings.REPLICATION_RETAINED_IDS = 100
    topic_create(name="budget", partitions=10, replication=3)
    call_command("produce", "budget", "--partition", "3", "--count", "40", "--acks", "all",
                 stdout=StringIO())
    tick()
    records = consume("budget", "--partition", "3")
    assert records[-1] == {"offset": 39, "value": "record-39"}
    assert 10 <= len(records) <= 11 and records[0]["offset"] == 40 - len(records)
    settings.REPLICATION_RETAINED_IDS = 0  # no budget: nothing more is compacted
    call_command("produce", "budget", "--partition", "3", "--count", "40", "--acks", "all",
                 stdout=StringIO())
    tick()
    assert consume("budget", "--partition", "3")[0]["offset"] == records[0]["offset"]


def test_compaction_inside_the_stored_run_leaves_each_offset_its_record(spus, settings):
    # Retention 24 (a step of 2), 8 records a tick each: most cuts fall inside the run the
    # records key holds, which Redis then trims (set_records._TRIM) instead of taking anew.
    # Each load checks every records key against its status (set_codec: refused if not).
    settings.REPLICATION_LOG_RETENTION = 24
    topic_create(name="trim", partitions=2, replication=3)
    topic_set_producer_rate(name="trim", rate=16)
    seen: dict[tuple[int, int], int] = {}
    starts = set()
    for n in range(14):
        tick(now=2_000_000 + 1_000 * n)
        state = hot_state.load().state
        for (_, partition), rs in state.replica_sets.items():
            leader = rs.replica[rs.leader]
            assert len(leader.log) == leader.leo - leader.start
            starts.add(leader.start)
            for offset, record in enumerate(leader.log, leader.start):
                assert seen.setdefault((partition, offset), record) == record
    assert len(starts) > 4  # compacted at several ticks


def test_a_tick_waits_for_the_lock_and_gives_up_without_touching_the_state(spus):
    topic_create(name="locked", partitions=1, replication=1)
    with hot_state.locked():
        with pytest.raises(TimeoutError):
            replication_tick(lock_timeout_s=0.2)
    assert "locked" not in hot_state.replicated_topics()


def test_rows_that_drifted_from_the_hot_state_are_rewritten_by_reconciliation(spus):
    """A crash between saving Redis and writing the store leaves stale rows."""
    from cluster.services.replication import replication_resync_store
    from cluster.tasks import reconcile_topics

    topic_create(name="drift", partitions=3, replication=3)
    call_command("produce", "drift", "--partition", "0", "--count", "5", "--acks", "all",
                 stdout=StringIO())
    truth = list(Partition.objects.order_by("index").values_list("leader", "lrs", "hw", "leo"))
    assert replication_resync_store() == 0
    Partition.objects.filter(index__in=[0, 2]).update(leader=None, lrs=[], hw=0, leo=0)
    assert reconcile_topics.apply().get()["partition_rows_resynced"] == 2
    assert list(Partition.objects.order_by("index").values_list(
        "leader", "lrs", "hw", "leo")) == truth
    assert truth[0][2] == 5
