"""The save's records script (set_records.Writes.op) takes each topic's writes packed in
one argument: appends of one record and of many, a whole run replaced, a run's head
dropped by compaction, a key deleted, over
two topics interleaved, land on exactly the keys and bytes the old one-argument-a-set
form wrote (each log below ends on its partition's block boundary, set_codec.apart_count,
so the whole of it is kept apart); an append within a block writes nothing. The statuses travel in the same script, packed by hash: it sets exactly the
fields and bytes a HSET of each would have, and a refused fenced write lands neither."""
from __future__ import annotations

import pytest
from django.test import override_settings

from cluster.adapters import hot_state, lease, set_records
from cluster.adapters.redis_keys import client
from cluster.core.replication import Replica
from cluster.engine.store_identity import check_hot_state_identity
from cluster.ports import bound_to_store

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def test_every_mode_lands_on_its_own_key_over_interleaved_topics(redis_url):
    with hot_state.bound_to_store():
        r = hot_state.client()
        for name, ids in ((("a", 5), [1, 2]), (("a", 1), [7]), (("b", 4), [3]), (("b", 9), [5]),
                          (("c", 0), list(range(1, 9))), (("c", 4), list(range(1, 9)))):
            r.set(set_records.records_key(*name), set_records.records_bytes(ids))
        writes = set_records.Writes()
        assert writes.append(("a", 5), (0, 2, 2), Replica(0, [1, 2, 4], start=0)) == (0, 3, 4)
        # Its ninth id is within partition 0's second block: the status's, nothing written.
        assert writes.append(("c", 0), (0, 8, 8), Replica(0, list(range(1, 10)), start=0)
                             ) == (0, 8, 8)
        writes.follow(("b", 4), (0, 1, 3), Replica(0, [3, 8, 9, 10], start=0))  # many
        writes.follow(("a", 1), (0, 1, 7), Replica(0, [11, 12], start=5))  # compacted: set
        writes.delete(("b", 9))
        writes.follow(("a", 7), None, Replica(0, [20], start=0))  # a new set
        # Compacted within the stored run: its head dropped in Redis, the ids after it sent.
        assert writes.follow(("c", 4), (0, 8, 8), Replica(0, list(range(4, 17)), start=3)
                             ) == (3, 9, 12)
        op = writes.op()
        assert [(k.rsplit(":", 2)[1:], mode) for k, mode, _ in set_records.unpacked(op)] == [
            (["a", "5"], b"a"), (["b", "4"], b"a"), (["a", "1"], b"s"), (["b", "9"], b"d"),
            (["a", "7"], b"s"), (["c", "4"], b"t")]
        assert set_records.unpacked(op)[-1][2] == (
            b"\x03\x00\x00\x00" + set_records.records_bytes([9, 10, 11, 12]))
        script, keys, args = op.arg
        assert r.eval(script, len(keys), *keys, *args) == 6

        def held(topic: str, partition: int) -> list[int]:
            return set_records.records_from(r.get(set_records.records_key(topic, partition)))

        assert held("a", 5) == [1, 2, 4]
        assert held("b", 4) == [3, 8, 9, 10]
        assert held("a", 1) == [11, 12]
        assert not r.exists(set_records.records_key("b", 9))
        assert held("a", 7) == [20]
        assert held("c", 0) == list(range(1, 9))
        assert held("c", 4) == list(range(4, 13))
        # Only some sets (a piece): their entries alone.
        assert [k.rsplit(":", 1)[1] for k, _, _ in
                set_records.unpacked(writes.op([("b", 4), ("a", 7)]))] == ["4", "7"]


def statuses_and_records() -> tuple[set_records.Writes, dict[str, dict[str, bytes]]]:
    """Records of two sets (logs ending on their block boundary: kept apart whole), and
    statuses over two hashes: one of more fields than a HSET batch takes, values holding
    commas and zero bytes, of every length."""
    writes = set_records.Writes()
    writes.follow(("a", 6), None, Replica(0, [1, 2], start=0))
    writes.follow(("b", 7), None, Replica(0, [3], start=0))
    statuses = {
        hot_state.sets_key("a"): {str(p): bytes([p % 256]) * (p % 90 + 1) + b",\x00"
                                  for p in range(700)},
        hot_state.sets_key("b"): {"7": b"\x00status,of b:7", "12": b"x"},
    }
    return writes, statuses


def test_the_script_sets_exactly_the_statuses_it_carries_with_the_records(redis_url):
    with hot_state.bound_to_store():
        r = hot_state.client()
        r.hset(hot_state.sets_key("b"), "3", b"kept")  # a field the save does not write
        writes, statuses = statuses_and_records()
        op = writes.op(None, statuses)
        assert set_records.statuses_of(op) == statuses
        script, keys, args = op.arg
        assert len(args) == 1 + 4 * 2 + 2 * 2  # a few arguments, never two a set
        assert r.eval(script, len(keys), *keys, *args) == 700 + 2 + 2
        assert r.hgetall(hot_state.sets_key("a")) == {k.encode(): v for k, v in
                                                      statuses[hot_state.sets_key("a")].items()}
        assert r.hgetall(hot_state.sets_key("b")) == {b"3": b"kept", b"7": b"\x00status,of b:7",
                                                      b"12": b"x"}
        assert set_records.records_from(r.get(set_records.records_key("a", 6))) == [1, 2]
        assert set_records.records_from(r.get(set_records.records_key("b", 7))) == [3]
        # Statuses alone (their records unchanged): the script still sets them.
        only = set_records.Writes().op(None, {hot_state.sets_key("c"): {"0": b"c0"}})
        script, keys, args = only.arg
        r.eval(script, len(keys), *keys, *args)
        assert r.hgetall(hot_state.sets_key("c")) == {b"0": b"c0"}
        assert set_records.Writes().op(None, {}) is None


@override_settings(REPLICATION_LOCK_LEASE_S=5)
def test_a_refused_fenced_write_lands_neither_statuses_nor_records(redis_url):
    store = check_hot_state_identity()
    with bound_to_store(store), lease.held(5) as mine:
        writes, statuses = statuses_and_records()
        client().set(mine.lock_key, "someone-else")  # the lease passed on
        with pytest.raises(lease.LeaseLost):
            lease.fenced_write(lease.Held((mine,)), [writes.op(None, statuses)])
    with bound_to_store(store):
        assert not client().exists(hot_state.sets_key("a"), hot_state.sets_key("b"),
                                   set_records.records_key("a", 6),
                                   set_records.records_key("b", 7))
