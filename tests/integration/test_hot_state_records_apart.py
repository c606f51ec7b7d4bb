"""Each set's retained records live apart from its status, append-only: after every unit
of work the records key holds exactly the reference replica's retained log up to its block
boundary (set_codec.apart_count) and the status the ids after it, through appends,
compaction, a new leader, a restart of the worker's memory and a topic drop."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import override_settings

from cluster.adapters import hot_state
from cluster.adapters.set_codec import RECORDS_APART, _encode, _extras, records_bytes
from cluster.core.replication.compaction import reference_replica
from cluster.services import topic_create, topic_delete
from cluster.services.outages import spu_offline
from cluster.services.records import records_consume, records_produce
from cluster.services.replication import replication_tick
from cluster.services.waiting import LocalQueue
from cluster.engine.engine import current as engine
from tests.helpers import assert_stored_like, register_spus, stored_status

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def tick(now: int) -> None:
    queue = LocalQueue()
    replication_tick(now=now, dispatch=queue)
    queue.drain()


def stored_records(topic: str, partition: int) -> list[int]:
    with hot_state.bound_to_store():
        return hot_state.records_from(
            hot_state.client().get(hot_state.records_key(topic, partition)))


def assert_records_match_the_state() -> None:
    engine().sets.clear()  # decode from Redis, as another worker would
    for (topic, partition), rs in hot_state.load().state.replica_sets.items():
        ref = reference_replica(rs)
        assert_stored_like(topic, partition, ref.log, ref.start)


@pytest.fixture
def orders(redis_url):
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=2, replication=3)
    tick(1_000)
    return "orders"


def stored_as(topic: str, partition: int, write: Callable[..., None]) -> list[int]:
    """The set stored again by ``write(rs, reference replica, its ids)`` (as an older
    format wrote it), under the lease, and no worker's memory of it left; its log's ids."""
    with hot_state.locked():
        rs = hot_state.load([(topic, partition)]).state.replica_sets[(topic, partition)]
        ref = reference_replica(rs)
        ids = list(ref.log)
        write(rs, ref, ids)
    engine().sets.clear()
    return ids


def test_a_busy_tick_appends_whole_blocks_and_the_status_holds_the_ids_after_them(orders):
    records_produce(topic=orders, partition=0, count=3)
    tick(2_000)
    # Partition 0's blocks end at offsets 8, 16, ...: three ids are the status's own.
    first = stored_status(orders, 0)[14]
    assert stored_records(orders, 0) == [] and len(first) == 3
    records_produce(topic=orders, partition=0, count=10)
    tick(3_000)
    apart = stored_records(orders, 0)
    assert apart[:3] == first and len(apart) == 8
    status = stored_status(orders, 0)
    assert status[0] == hot_state.SET_FORMAT and len(status[14]) == 5
    assert status[16]["recs"] == [8, apart[-1]]
    records_produce(topic=orders, partition=0, count=1)
    tick(4_000)
    # Within the block: the status grew by the id, the records key was not written.
    assert stored_records(orders, 0) == apart and len(stored_status(orders, 0)[14]) == 6
    assert_records_match_the_state()


def test_each_partitions_blocks_end_at_offsets_shifted_by_its_number(orders):
    for p in (0, 1):
        records_produce(topic=orders, partition=p, count=7)
    tick(2_000)
    # LEO 7: partition 1's block ends there (7 + 1 is a multiple of 8), partition 0's not.
    assert len(stored_records(orders, 0)) == 0 and len(stored_records(orders, 1)) == 7
    assert_records_match_the_state()


@override_settings(REPLICATION_LOG_RETENTION=4)
def test_compaction_rewrites_the_run_from_the_new_log_start(orders):
    for second in range(2, 8):
        records_produce(topic=orders, partition=0, count=3)
        tick(second * 1_000)
        assert_records_match_the_state()
    assert len(stored_records(orders, 0)) < 18


def test_a_new_leader_with_the_same_log_keeps_the_run_and_a_consumer_reads_it(orders):
    outcome = records_produce(topic=orders, partition=0, count=4)
    tick(2_000)
    leader = hot_state.load([(orders, 0)]).state.replica_sets[(orders, 0)].leader
    spu_offline(spu_id=leader, by="test")
    tick(3_000)
    assert_records_match_the_state()
    read = records_consume(topic=orders, partition=0, offset=0)
    assert [r["offset"] for r in read] == [0, 1, 2, 3]
    assert outcome.state == "acknowledged"


def test_a_set_saved_with_its_records_inside_is_read_then_saved_apart(orders):
    records_produce(topic=orders, partition=1, count=3)
    tick(2_000)

    def format_2(rs, ref, ids):  # one value, the records inside, no records key
        hot_state.client().hset(hot_state.sets_key(orders), "1", hot_state.encode_set(rs))
        hot_state.client().delete(hot_state.records_key(orders, 1))

    ids = stored_as(orders, 1, format_2)
    assert [r["offset"] for r in records_consume(topic=orders, partition=1)] == [0, 1, 2]
    records_produce(topic=orders, partition=1, count=6)
    tick(3_000)
    # LEO 9: partition 1's block ends at offset 7.
    assert stored_records(orders, 1)[:3] == ids and len(stored_records(orders, 1)) == 7
    assert_records_match_the_state()


def test_a_status_that_kept_its_whole_log_apart_is_read_then_saved_to_the_block(orders):
    records_produce(topic=orders, partition=0, count=11)
    tick(2_000)

    def before_blocks(rs, ref, ids):  # every id apart, none in the status
        extras = {**_extras(rs), RECORDS_APART: [len(ids), ids[-1]]}
        hot_state.client().hset(hot_state.sets_key(orders), "0",
                                _encode(rs, ref, [], extras)[0])
        hot_state.client().set(hot_state.records_key(orders, 0), records_bytes(ids))

    ids = stored_as(orders, 0, before_blocks)
    assert [r["offset"] for r in records_consume(topic=orders, partition=0)] == list(range(11))
    records_produce(topic=orders, partition=0, count=1)
    tick(3_000)
    # LEO 12: the key is cut back to partition 0's block (8 ids), the rest in the status.
    assert stored_records(orders, 0) == ids[:8] and len(stored_status(orders, 0)[14]) == 4
    assert_records_match_the_state()


def test_a_status_whose_records_are_missing_is_refused_not_read_as_empty(orders):
    records_produce(topic=orders, partition=0, count=9)  # a block apart
    tick(2_000)
    with hot_state.bound_to_store():
        hot_state.client().delete(hot_state.records_key(orders, 0))
    engine().sets.clear()
    refused = r"records and status disagree in 1 partition\(s\): orders/0"
    with pytest.raises(ValueError, match=refused):
        hot_state.load([(orders, 0)])


def test_a_dropped_topic_leaves_no_records_key(orders):
    records_produce(topic=orders, partition=0, count=2)
    tick(2_000)
    topic_delete(name=orders)
    tick(3_000)
    with hot_state.bound_to_store():
        assert not hot_state.client().exists(hot_state.records_key(orders, 0))


def test_a_set_another_worker_wrote_is_loaded_with_only_the_ids_appended_since(orders,
                                                                                monkeypatch):
    records_produce(topic=orders, partition=0, count=9)  # a block apart, an id in the status
    tick(2_000)
    ours = dict(engine().sets.images)  # this worker's sets, as it committed them
    engine().sets.clear()  # the other worker knows nothing of them
    records_produce(topic=orders, partition=0, count=8)
    tick(3_000)
    expected = stored_records(orders, 0) + stored_status(orders, 0)[14]
    assert len(expected) == 17 and len(stored_records(orders, 0)) == 16
    engine().sets.images.clear()
    engine().sets.images.update(ours)  # back to the first worker, which knew 3 of 5
    from cluster.adapters import set_records

    asked = []
    real = hot_state.client

    class Spy:
        def __init__(self, pipe):
            self.pipe = pipe

        def __getattr__(self, name):
            def call(*args, **kw):
                asked.append(name)
                return getattr(self.pipe, name)(*args, **kw)
            return call if name in ("get", "getrange") else getattr(self.pipe, name)

    class Client:
        def __getattr__(self, name):
            if name == "pipeline":
                return lambda **kw: Spy(real().pipeline(**kw))
            return getattr(real(), name)

    monkeypatch.setattr(set_records, "client", lambda: Client())
    with hot_state.locked() as held:
        hot = hot_state.load(committed=engine().sets, held=held)
    monkeypatch.undo()
    assert reference_replica(hot.state.replica_sets[(orders, 0)]).log == expected
    assert "getrange" in asked and "get" not in asked
