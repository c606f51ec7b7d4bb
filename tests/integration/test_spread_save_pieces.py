"""Saves in bounded pieces with the hot state spread over two Redis servers
(cluster/adapters/hot_save._save_spread): each server's part of a large save is cut as one
server's is (save_pieces.py), every server's last piece lands before the first server's,
which carries the meta and the log append. Before, each server's part was one
transaction: at 100,000 partitions over two servers a first tick held each for 500 ms
and a busy shard's save for 100-140 ms (tests/bench/bench_spread_saves.py)."""
from __future__ import annotations

import pytest

from cluster.adapters import hot_state, lease, metadata_log, save_pieces, shards
from cluster.core.replication.compaction import reference_replica
from cluster.engine.engine import current as engine
from cluster.services import topic_create, topic_delete
from cluster.services.records import records_consume, records_produce, topic_set_producer_rate
from cluster.services.repair import store_repair_list
from cluster.services.replication import (replication_coordinate, replication_shard_tick,
                                          replication_tick)
from cluster.services.waiting import LocalQueue
from tests.helpers import assert_stored_like, register_spus
from tests.integration.test_hot_state_servers import expected_server, keys_by_server
from tests.integration.test_save_pieces import records_written, set_writes

pytestmark = [pytest.mark.django_db, pytest.mark.redis]

SHARDS = 4
PARTITIONS = 16  # blocks of 2: two blocks, four sets, a shard; eight sets a server
BUSY = 8 * PARTITIONS  # the simulated producer: a block of offsets a partition a second


def tick(now: int) -> None:
    queue = LocalQueue()
    replication_tick(now=now, dispatch=queue)
    queue.drain()


def step(now: int) -> None:
    """The coordinator's tick and every shard's, as the workers run them."""
    queue = LocalQueue()
    work = replication_coordinate(now=now, dispatch=queue)
    for shard, quotas in (work or {}).items():
        replication_shard_tick(shard, quotas=quotas, now=now, dispatch=queue)
    queue.drain()


def assert_records_match_the_state() -> None:
    engine().sets.clear()  # decode from Redis, as another worker would
    for (topic, partition), rs in hot_state.load().state.replica_sets.items():
        ref = reference_replica(rs)
        assert_stored_like(topic, partition, ref.log, ref.start)
    assert store_repair_list().partitions == []


@pytest.fixture
def spread(two_hot_servers, settings, monkeypatch):
    """Two servers, four shards, saves of three sets or more in pieces of two; SPUs
    adopted by a tick, no topic yet."""
    settings.REPLICATION_SHARDS = SHARDS
    settings.REPLICATION_SAVE_PIECE_SETS = 2
    settings.REPLICATION_HEARTBEAT_TIMEOUT_S = 600  # no follower leaves the LRS meanwhile
    monkeypatch.setattr(shards, "BLOCK", 2)
    register_spus(0, 1, 2, online=True)
    tick(1_000)
    return two_hot_servers


@pytest.fixture
def writes(monkeypatch):
    """Every fenced write as (server, ops), in order; ``fail_at`` refuses the n-th on,
    ``fail_on`` (server, n) the n-th that writes something on that server."""
    calls: list[tuple[int, list[lease.WriteOp]]] = []
    real = lease.fenced_write
    state = {"fail_at": None}

    def counting(held, ops, server=0):
        calls.append((server, list(ops)))
        on = state.get("fail_on")  # (server, n): its n-th write on from there, refused
        if ((state["fail_at"] is not None and len(calls) >= state["fail_at"])
                or (on and server == on[0]
                    and sum(s == on[0] and bool(o) for s, o in calls) >= on[1])):
            raise lease.LeaseLost("the test took the lease between two pieces")
        return real(held, ops, server=server)

    monkeypatch.setattr(lease, "fenced_write", counting)
    return type("Writes", (), {"calls": calls, "state": state})


def made_busy(partitions: int = PARTITIONS) -> None:
    topic_create(name="orders", partitions=partitions, replication=3)
    topic_set_producer_rate(name="orders", rate=BUSY)


def generations(ops: list[lease.WriteOp]) -> int:
    return sum(op.op == "set" and op.key.endswith(":sets-gen") for op in ops)


def appends(ops: list[lease.WriteOp]) -> bool:
    return any(op.op == "eval" and op.key == metadata_log.APPEND for op in ops)


@pytest.mark.parametrize("rows", [False, True], ids=["fields", "rows"])
def test_a_busy_shard_on_the_second_server_saves_in_pieces_before_its_log(
        spread, writes, settings, monkeypatch, rows):
    """Its busy sets as fields (pieces of two sets) or as its blocks' rows (pieces of one
    block here: save_pieces.ROW_PIECE_FACTOR at 1)."""
    settings.REPLICATION_STATUS_ROWS = rows
    monkeypatch.setattr(save_pieces, "ROW_PIECE_FACTOR", 1)
    made_busy()
    tick(2_000)
    step(3_000)  # every shard reads its sets once
    writes.calls.clear()
    step(4_000)
    second = [ops for server, ops in writes.calls if server == 1 and set_writes(ops)]
    # Shards 1 and 3, four busy sets each: two pieces of two sets (as fields, or as one
    # block's row), each appending its own sets' records.
    assert [set_writes(ops) for ops in second] == [1 if rows else 2] * 4
    assert [len(records_written(ops)) for ops in second] == [2] * 4
    assert {expected_server(p) for ops in second for _, p in records_written(ops)} == {1}
    assert all(generations(ops) == 1 for ops in second)  # its shard's, in every piece
    # No write on the second server carries the log; each shard's append comes after its
    # pieces, on the first.
    assert not any(appends(ops) for server, ops in writes.calls if server == 1)
    assert_records_match_the_state()
    # The simulated producer's two blocks appended, the first replicated: every set alike.
    offsets = {(rs.hw, rs.leo) for rs in hot_state.load().state.replica_sets.values()}
    assert offsets == {(8, 16)}


def test_a_spread_tick_that_makes_a_topic_writes_each_servers_sets_in_pieces(spread, writes):
    made_busy()
    writes.calls.clear()
    tick(2_000)
    pieces = [(server, ops) for server, ops in writes.calls if set_writes(ops)]
    assert {server for server, _ in pieces} == {0, 1}
    assert all(set_writes(ops) <= 2 for _, ops in pieces) and len(pieces) == 8
    named = [any(op.key == hot_state.META for op in ops) for _, ops in writes.calls]
    assert named[-1] and not any(named[:-1])
    assert writes.calls[-1][0] == 0 and appends(writes.calls[-1][1])
    assert "orders" in hot_state.replicated_topics()
    first, second = keys_by_server(spread)
    assert {expected_server(int(p)) for p in second["sets:orders"]} == {1}
    assert len(first["sets:orders"]) + len(second["sets:orders"]) == PARTITIONS
    assert_records_match_the_state()


def test_a_holder_stopped_in_the_second_servers_pieces_leaves_nothing_made_again(spread,
                                                                               writes):
    """A stop between pieces leaves sets on the second server of a topic no meta names.
    Made again with two partitions (both on the first server), it holds only its own: the
    save that makes it deletes what was left on every server, not on the first alone."""
    made_busy()
    writes.calls.clear()
    # The first server's three pieces but its last, then the second's first: the fifth
    # write is refused.
    writes.state["fail_at"] = 5
    with pytest.raises(lease.LeaseLost):
        tick(2_000)
    writes.state["fail_at"] = None
    assert [server for server, _ in writes.calls] == [0, 0, 0, 1, 1]
    assert "orders" not in hot_state.replicated_topics()
    _, second = keys_by_server(spread)
    assert len(second["sets:orders"]) == 2
    topic_delete(name="orders")
    made_busy(partitions=2)
    tick(3_000)
    assert "orders" in hot_state.replicated_topics()
    first, second = keys_by_server(spread)
    assert first["sets:orders"] == {"0", "1"}
    assert not [name for name in second if "orders" in name]
    step(4_000)
    assert_records_match_the_state()
    for p in range(2):
        records_produce(topic="orders", partition=p, count=2)
    step(5_000)
    assert_records_match_the_state()
    read = records_consume(topic="orders", partition=1, offset=0)
    assert len(read) > 2 and [r["offset"] for r in read] == list(range(len(read)))


def test_a_dropped_topic_is_deleted_in_pieces_on_each_server_after_its_save(spread, writes,
                                                                            settings):
    settings.REPLICATION_DROP_PIECE_SETS = 3
    made_busy()
    tick(2_000)
    step(3_000)
    step(4_000)
    writes.calls.clear()
    topic_delete(name="orders")
    tick(5_000)
    # The save first (the meta without the topic, on the first server), then the pieces.
    named = [i for i, (server, ops) in enumerate(writes.calls)
             if server == 0 and any(op.key == hot_state.META for op in ops)]
    pieces = [(server, [f for op in ops if op.op == "hdel" for f in op.arg])
              for server, ops in writes.calls[named[-1] + 1:]]
    assert not any(op.op == "hdel" for _, ops in writes.calls[:named[-1] + 1] for op in ops)
    # Eight sets a server, three a piece.
    assert [(server, len(fields)) for server, fields in pieces if fields] == [
        (0, 3), (0, 3), (0, 2), (1, 3), (1, 3), (1, 2)]
    assert all({expected_server(int(f)) for f in fields} == {server}
               for server, fields in pieces if fields)
    assert not any("orders" in name for found in keys_by_server(spread) for name in found)
    assert "orders" not in hot_state.replicated_topics()
    step(6_000)
    assert_records_match_the_state()


def test_a_busy_shard_stopped_between_its_pieces_leaves_each_set_whole(spread, writes,
                                                                      settings):
    """The second server's shard lands one piece of two, then its lease is lost: those two
    sets are a step ahead, each with its own records, the others as they were; the next
    steps go on from there and give no record id out twice."""
    settings.REPLICATION_STATUS_ROWS = False  # its four sets as fields: two pieces of two
    made_busy()
    tick(2_000)
    step(3_000)
    before = {k: rs.leo for k, rs in hot_state.load().state.replica_sets.items()}
    writes.calls.clear()
    writes.state["fail_on"] = (1, 2)  # the second server's second write is refused
    with pytest.raises(lease.LeaseLost):
        step(4_000)
    writes.state["fail_on"] = None
    (landed,) = [ops for server, ops in writes.calls if server == 1 and ops][:1]
    assert set_writes(landed) == 2
    after = {k: rs.leo for k, rs in hot_state.load().state.replica_sets.items()}
    ahead = {k for k in after if after[k] > before[k]}
    # Shard 0 (first server) stepped whole before; of shard 1, the piece that landed.
    second = {k for k in ahead if expected_server(k[1]) == 1}
    assert second == records_written(landed)
    assert_records_match_the_state()
    for now in (5_000, 6_000, 7_000):
        step(now)
    assert_records_match_the_state()
    ids = [i for rs in hot_state.load().state.replica_sets.values()
           for i in reference_replica(rs).log]
    assert len(ids) == len(set(ids))
