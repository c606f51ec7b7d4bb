"""A dropped topic's keys are deleted in bounded pieces after the save that stops naming it
(cluster/adapters/drop_pieces.py). Before, the save's one transaction deleted them: 504 ms
of Redis for a topic of 100,000 partitions."""
from __future__ import annotations

import pytest

from cluster.adapters import drop_pieces, hot_state, lease, metadata_log
from cluster.adapters.redis_keys import store_namespace
from cluster.adapters.set_codec import RECORDS_BLOCK
from cluster.ports import bound_to_store
from cluster.services import topic_create, topic_delete
from cluster.services.records import records_consume, records_produce, topic_set_producer_rate
from tests.helpers import register_spus
from tests.integration import test_save_pieces
from tests.integration.test_save_pieces import assert_records_match_the_state, tick

pytestmark = [pytest.mark.django_db, pytest.mark.redis]

PARTITIONS = 10
writes = test_save_pieces.writes  # the fixture: every fenced write's ops, in order


@pytest.fixture
def orders(redis_url, settings):
    """A busy topic of ten partitions, stepped twice (records kept apart in every set);
    drops in pieces of four sets."""
    settings.REPLICATION_DROP_PIECE_SETS = 4
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=PARTITIONS, replication=3)
    topic_set_producer_rate(name="orders", rate=RECORDS_BLOCK * PARTITIONS)
    for p in range(PARTITIONS):
        records_produce(topic="orders", partition=p, count=2)
    tick(1_000)
    tick(2_000)
    tick(3_000)
    for p in range(PARTITIONS):  # values stored: the topic's values hash
        records_produce(topic="orders", partition=p, values=[f"v{p}", f"w{p}"])
    return "orders"


def keys_of(topic: str) -> dict[str, int]:
    """Every key of ``topic`` in the hot state, with a hash's field count."""
    with bound_to_store():
        prefix = f"repl:{{{store_namespace()}}}:"
        client = hot_state.client()
        found = {}
        for k in client.scan_iter(match=prefix + "*"):
            name = k.decode()[len(prefix):]
            parts = name.split(":")
            if len(parts) > 1 and parts[1] == topic:
                found[name] = (client.hlen(k) if client.type(k) == b"hash" else 1)
        return found


def dropping() -> set[bytes]:
    with bound_to_store():
        return hot_state.client().smembers(drop_pieces.dropping_key())


def deleted_sets(ops: list[lease.WriteOp]) -> list[str]:
    return [f for op in ops if op.op == "hdel" for f in op.arg]


def test_a_dropped_topic_lands_unnamed_first_then_its_keys_go_in_pieces(orders, writes):
    before = keys_of(orders)
    assert before["sets:orders"] == PARTITIONS and before.get("values:orders")
    assert "rows:orders" in before  # steady sets' statuses as their blocks' rows
    assert sum(name.startswith("recs:orders:") for name in before) == PARTITIONS
    writes.calls.clear()
    topic_delete(name=orders)
    tick(4_000)
    first = writes.calls[0]
    # The save: the meta without the topic, its entry, its name noted; none of its keys.
    assert any(op.key == hot_state.META for op in first)
    assert any(op.op == "eval" and op.key == metadata_log.APPEND for op in first)
    assert [op.arg for op in first if op.op == "sadd"] == [orders]
    assert not deleted_sets(first) and not any(op.op in ("del", "unlink") and orders in op.key
                                               for op in first)
    # Then pieces of at most four sets, each deleting their records with their fields.
    pieces = [ops for ops in writes.calls[1:] if deleted_sets(ops)]
    assert [len(deleted_sets(ops)) for ops in pieces] == [4, 4, 2]
    assert sorted(int(f) for ops in pieces for f in deleted_sets(ops)) == list(range(PARTITIONS))
    assert all(len([op for op in ops if op.op == "eval" and ":recs:" in op.key]) == 1
               for ops in pieces)
    assert keys_of(orders) == {} and dropping() == set()
    assert "orders" not in hot_state.replicated_topics()


def stop_between_drop_pieces(orders: str, writes) -> dict[str, int]:
    """Delete ``orders`` and stop its holder after the save and one piece; what is left."""
    writes.calls.clear()
    topic_delete(name=orders)
    writes.state["fail_at"] = 3  # the save and one piece land
    with pytest.raises(lease.LeaseLost):
        tick(4_000)
    writes.state["fail_at"] = None
    return keys_of(orders)


def test_a_holder_stopped_between_drop_pieces_leaves_the_rest_to_the_next_holder(orders, writes):
    left = stop_between_drop_pieces(orders, writes)
    # Four sets deleted with their records; the six others whole, with the hashes.
    assert left["sets:orders"] == 6
    assert sum(name.startswith("recs:orders:") for name in left) == 6
    assert dropping() == {orders.encode()}
    assert "orders" not in hot_state.replicated_topics()
    tick(5_000)  # the next holder's first tick (a complete load) finishes it
    assert keys_of(orders) == {} and dropping() == set()
    assert_records_match_the_state()


def test_a_leftover_another_holder_left_is_finished_by_a_tick_that_changes_no_topic(orders):
    from cluster.engine.engine import current as engine

    tick(4_000)
    with bound_to_store():  # what another holder's stopped drop left: a set and its name
        hot_state.client().hset(f"repl:{{{store_namespace()}}}:sets:gone", "0", b"x")
        hot_state.client().sadd(drop_pieces.dropping_key(), "gone")
    engine().sets.clear()  # this process starting: its image is not its own any more
    tick(5_000)  # a whole tick that takes no image of its own reads the names
    assert keys_of("gone") == {} and dropping() == set()
    assert keys_of(orders)["sets:orders"] == PARTITIONS
    assert_records_match_the_state()
    tick(6_000)
    with bound_to_store():
        hot_state.client().sadd(drop_pieces.dropping_key(), "gone")
    tick(7_000)  # after its own save, a tick reads nothing of ``dropping``
    assert dropping() == {b"gone"}


def test_a_topic_made_again_after_a_stopped_drop_holds_its_own_and_no_sweep_takes_it(
        orders, writes):
    writes.calls.clear()
    topic_delete(name=orders)
    writes.state["fail_at"] = 3
    with pytest.raises(lease.LeaseLost):
        tick(4_000)
    writes.state["fail_at"] = None
    topic_create(name=orders, partitions=2, replication=3)
    tick(5_000)
    assert keys_of(orders)["sets:orders"] == 2 and dropping() == set()
    for p in range(2):
        records_produce(topic=orders, partition=p, count=2)
    tick(6_000)
    topic_create(name="payments", partitions=2, replication=3)
    tick(7_000)  # a change of topics: nothing left to finish
    assert keys_of(orders)["sets:orders"] == 2
    assert_records_match_the_state()
    assert [r["offset"] for r in records_consume(topic=orders, partition=1, offset=0)][:2] \
        == [0, 1]

