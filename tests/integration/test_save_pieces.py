"""A large save lands as bounded fenced pieces (cluster/adapters/save_pieces.py): each
piece holds its sets' statuses with their records, so whatever lands, no set's status and
records disagree; the sets whose logged status moved land with the log entries and the
meta in the last piece; a holder stopped between pieces leaves a state the next tick
steps on, never giving a record id out twice."""
from __future__ import annotations

import pytest
from django.test import override_settings

from cluster.adapters import hot_state, lease, metadata_log, save_pieces, set_records
from cluster.adapters.set_codec import RECORDS_BLOCK, encode_status
from cluster.core.replication.compaction import reference_replica
from cluster.engine.engine import current as engine
from cluster.services import topic_create
from cluster.services.outages import spu_offline
from cluster.services.records import records_consume, records_produce, topic_set_producer_rate
from cluster.services.repair import store_repair_list
from cluster.services.replication import replication_tick
from cluster.services.waiting import LocalQueue
from tests.helpers import assert_stored_like, register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]

PARTITIONS = 6


def tick(now: int) -> None:
    queue = LocalQueue()
    replication_tick(now=now, dispatch=queue)
    queue.drain()


def fresh_load() -> hot_state.HotState:
    engine().sets.clear()  # decode from Redis, as another worker would
    return hot_state.load()


def assert_records_match_the_state() -> None:
    for (topic, partition), rs in fresh_load().state.replica_sets.items():
        ref = reference_replica(rs)
        assert_stored_like(topic, partition, ref.log, ref.start)
    assert store_repair_list().partitions == []


def produce_everywhere(count: int = 2) -> None:
    for p in range(PARTITIONS):
        records_produce(topic="orders", partition=p, count=count)


@pytest.fixture
def orders(redis_url, settings):
    settings.REPLICATION_SAVE_PIECE_SETS = 2
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=PARTITIONS, replication=3)
    # Eight records per partition per second from the simulated producer (a block of
    # offsets, set_codec.RECORDS_BLOCK): the tick itself appends to every set's records
    # key, wherever its block ends, so its pieces carry records.
    topic_set_producer_rate(name="orders", rate=RECORDS_BLOCK * PARTITIONS)
    tick(1_000)
    return "orders"


@pytest.fixture
def writes(monkeypatch):
    """Every fenced write's ops, in order; ``fail_at`` refuses the n-th from then on."""
    calls: list[list[lease.WriteOp]] = []
    real = lease.fenced_write
    state = {"fail_at": None}

    def counting(held, ops, server=0):
        calls.append(list(ops))
        if state["fail_at"] is not None and len(calls) >= state["fail_at"]:
            raise lease.LeaseLost("the test took the lease between two pieces")
        return real(held, ops, server=server)

    monkeypatch.setattr(lease, "fenced_write", counting)
    calls_state = type("Writes", (), {"calls": calls, "state": state})
    return calls_state


def set_scripts(ops: list[lease.WriteOp]) -> list[lease.WriteOp]:
    """The ops of the save's sets: its records script, which also sets their statuses."""
    return [op for op in ops if op.op == "eval" and (":recs:" in op.key or ":sets:" in op.key)]


def sets_written(ops: list[lease.WriteOp]) -> set[tuple[str, int]]:
    return {(hash_key.rsplit(":", 1)[1], int(p)) for op in set_scripts(ops)
            for hash_key, fields in set_records.statuses_of(op).items() for p in fields}


def set_writes(ops: list[lease.WriteOp]) -> int:
    return len(sets_written(ops))


def records_written(ops: list[lease.WriteOp]) -> set[tuple[str, int]]:
    return {(topic, int(p)) for op in set_scripts(ops)
            for topic, p in (k.rsplit(":", 2)[1:] for k, _, _ in set_records.unpacked(op))}


def test_a_busy_tick_saves_in_pieces_of_at_most_the_limit(orders, writes):
    produce_everywhere()
    writes.calls.clear()
    tick(2_000)
    pieces = [ops for ops in writes.calls if set_writes(ops)]
    assert len(pieces) == 3 and all(set_writes(ops) <= 2 for ops in pieces)
    # Each piece appends the records of its own sets (the simulated producer's).
    assert all(records_written(ops) == sets_written(ops) for ops in pieces)
    # The meta lands with the last piece only.
    meta = hot_state.META
    assert [any(op.key == meta for op in ops) for ops in pieces] == [False, False, True]
    assert_records_match_the_state()
    # The pieces' scripts set exactly the statuses they carried, and those are what
    # encoding the state loaded back gives, byte for byte.
    carried: dict[str, dict[bytes, bytes]] = {}
    for op in (op for ops in pieces for op in set_scripts(ops)):
        for hash_key, fields in set_records.statuses_of(op).items():
            carried.setdefault(hash_key, {}).update((k.encode(), v) for k, v in fields.items())
    with hot_state.bound_to_store():
        assert carried == {hash_key: hot_state.client().hgetall(hash_key) for hash_key in carried}
    for (topic, partition), rs in fresh_load().state.replica_sets.items():
        encoded = encode_status(rs, reference_replica(rs))[0]
        assert carried[hot_state.sets_key(topic)][str(partition).encode()] == encoded
    read = records_consume(topic=orders, partition=5, offset=0)
    assert [r["offset"] for r in read] == [0, 1]


def test_a_holder_stopped_between_pieces_leaves_every_set_consistent(orders, writes):
    produce_everywhere()
    tick(2_000)
    before = {k: rs.hw for k, rs in fresh_load().state.replica_sets.items()}
    produce_everywhere(3)
    writes.calls.clear()
    writes.state["fail_at"] = 2  # the first piece lands, the second is refused
    with pytest.raises(lease.LeaseLost):
        tick(3_000)
    writes.state["fail_at"] = None
    after = {k: rs.hw for k, rs in fresh_load().state.replica_sets.items()}
    ahead = [k for k in after if after[k] > before[k]]
    assert len(ahead) == 2 and all(after[k] == before[k] for k in after if k not in ahead)
    assert_records_match_the_state()
    # The next holder steps on from there; no record id is given out twice.
    produce_everywhere()
    tick(4_000)
    tick(5_000)
    assert_records_match_the_state()
    ids = [i for rs in fresh_load().state.replica_sets.values()
           for i in reference_replica(rs).log]
    assert len(ids) == len(set(ids))


def test_sets_whose_status_moved_land_with_their_log_entries_and_the_meta(orders, writes):
    produce_everywhere()
    tick(2_000)
    led = {k: rs.leader for k, rs in fresh_load().state.replica_sets.items()}
    victim = led[(orders, 0)]
    head = metadata_log.head()
    produce_everywhere()
    writes.calls.clear()
    spu_offline(spu_id=victim, by="test")
    tick(3_000)
    moved = {k for k, rs in fresh_load().state.replica_sets.items() if rs.leader != led[k]}
    assert moved and metadata_log.head() > head
    last = next(ops for ops in reversed(writes.calls) if set_writes(ops))
    held = sets_written(last)
    assert moved <= held
    assert any(op.op == "eval" and op.key == metadata_log.APPEND for op in last)
    assert_records_match_the_state()


@override_settings(REPLICATION_SAVE_PIECE_SETS=3)
def test_groups_keep_held_sets_last_and_bound_the_others():
    keys = [("t", p) for p in range(8)]
    assert save_pieces.groups(keys[:3], set()) == [keys[:3]]
    assert save_pieces.groups(keys, {("t", 0), ("t", 4)}) == [
        [("t", 1), ("t", 2), ("t", 3)], [("t", 5), ("t", 6), ("t", 7)], [("t", 0), ("t", 4)]]
    assert save_pieces.groups(keys[:5], {("t", 0)}) == [
        [("t", 1), ("t", 2), ("t", 3)], [("t", 4), ("t", 0)]]


def test_an_entry_naming_no_partition_keeps_the_save_whole():
    assert save_pieces.held_sets([{"type": "hw", "topics": {}}], [("t", 1)]) == {("t", 1)}
    assert save_pieces.held_sets([{"type": "election", "topic": "t", "partition": 2}],
                                 []) == {("t", 2)}
    assert save_pieces.held_sets([{"type": "topic-replicated", "topic": "t"}], []) is None
    assert save_pieces.held_sets([{"type": "spu-registered"}], []) is None
    # A topic new to the hot state: its entry and sets wait for no piece (the meta names
    # it last); another topic's moved sets are still held.
    made = [{"type": "topic-replicated", "topic": "new"}]
    assert save_pieces.held_sets(made, [("new", 0), ("t", 1)], {"new"}) == {("t", 1)}
    assert save_pieces.held_sets(made, [("new", 0)], {"other"}) is None
    # Entries noted before the step: the SPU table's wait for the last piece; another's
    # (a service's) keep the save whole.
    assert not save_pieces.whole_for_noted([{"type": "spu-registered"}, {"type": "spu-sync"}])
    assert save_pieces.whole_for_noted([{"type": "spu-sync"}, {"type": "event"}])


def test_a_shard_task_saves_its_sets_in_pieces_too(redis_url, settings, monkeypatch, writes):
    from cluster.adapters import shards
    from cluster.services.replication import replication_coordinate, replication_shard_tick

    settings.REPLICATION_SAVE_PIECE_SETS = 2
    settings.REPLICATION_SHARDS = 2
    monkeypatch.setattr(shards, "BLOCK", 4)  # 16 partitions over both shards
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=16, replication=3)
    tick(1_000)
    for p in range(16):
        records_produce(topic="orders", partition=p, count=2)
    writes.calls.clear()
    for now in (2_000, 3_000):
        queue = LocalQueue()
        work = replication_coordinate(now=now, dispatch=queue)
        for shard, quotas in (work or {}).items():
            replication_shard_tick(shard, quotas=quotas, now=now, dispatch=queue)
        queue.drain()
    pieces = [set_writes(ops) for ops in writes.calls if set_writes(ops)]
    assert len(pieces) >= 8 and max(pieces) <= 2  # each shard's 8 sets, two at a time
    assert_records_match_the_state()
    hws = [rs.hw for rs in fresh_load().state.replica_sets.values()]
    assert hws == [2] * 16


@pytest.fixture
def spus_adopted(redis_url, settings):
    """Three SPUs adopted by a tick, no topic yet; saves of three sets or more in pieces."""
    settings.REPLICATION_SAVE_PIECE_SETS = 2
    register_spus(0, 1, 2, online=True)
    tick(1_000)


def topic_made_busy() -> None:
    topic_create(name="orders", partitions=PARTITIONS, replication=3)
    topic_set_producer_rate(name="orders", rate=RECORDS_BLOCK * PARTITIONS)


def test_a_tick_that_makes_a_topic_writes_its_sets_in_pieces_the_last_naming_it(
        spus_adopted, writes):
    """A whole tick's one transaction at 1,000,000 partitions (every set new) held Redis
    20.8 s: a made topic's sets go in pieces too; the meta and its entry land last."""
    topic_made_busy()
    writes.calls.clear()
    tick(2_000)
    pieces = [ops for ops in writes.calls if set_writes(ops)]
    assert len(pieces) >= 3 and all(set_writes(ops) <= 2 for ops in pieces)
    named = [any(op.key == hot_state.META for op in ops) for ops in writes.calls]
    assert named[-1] and not any(named[:-1])
    assert "orders" in hot_state.replicated_topics()
    assert_records_match_the_state()


def test_a_fresh_stores_first_tick_writes_in_pieces_its_spus_entries_last(redis_url,
                                                                          settings, writes):
    """The first tick of a store registers every SPU (entries the SPU loops note) and
    makes every topic: pieces too, the SPUs' entries in the last with the meta."""
    settings.REPLICATION_SAVE_PIECE_SETS = 2
    register_spus(0, 1, 2, online=True)
    topic_made_busy()
    tick(1_000)
    pieces = [ops for ops in writes.calls if set_writes(ops)]
    assert len(pieces) >= 3 and all(set_writes(ops) <= 2 for ops in pieces)
    appended = [any(op.key == metadata_log.APPEND for op in ops) for ops in writes.calls]
    assert appended[-1] and not any(appended[:-1])
    with hot_state.bound_to_store():
        entries = [e.data["type"] for e in metadata_log.read(1)]
    assert entries.count("spu-registered") == 3 and "topic-replicated" in entries
    assert_records_match_the_state()


def test_a_holder_stopped_between_the_pieces_that_make_a_topic_leaves_it_unnamed(
        spus_adopted, writes):
    """The pieces that landed leave sets of a topic no meta names. Made again under its
    name with fewer partitions, it holds only its own: the first piece of the save that
    makes it deleted what was left (a status hash of six fields would keep four)."""
    from cluster.services import topic_delete

    topic_made_busy()
    writes.calls.clear()
    writes.state["fail_at"] = 3  # two pieces land: four sets' statuses
    with pytest.raises(lease.LeaseLost):
        tick(2_000)
    writes.state["fail_at"] = None
    assert "orders" not in hot_state.replicated_topics()
    with hot_state.bound_to_store():
        assert hot_state.client().hlen(hot_state.sets_key("orders")) == 4
    topic_delete(name="orders")
    topic_create(name="orders", partitions=2, replication=3)
    tick(3_000)
    assert "orders" in hot_state.replicated_topics()
    with hot_state.bound_to_store():
        assert hot_state.client().hlen(hot_state.sets_key("orders")) == 2
    assert_records_match_the_state()
    for p in range(2):
        records_produce(topic="orders", partition=p, count=2)
    tick(4_000)
    assert_records_match_the_state()
    assert [r["offset"] for r in records_consume(topic="orders", partition=1, offset=0)] \
        == [0, 1]
