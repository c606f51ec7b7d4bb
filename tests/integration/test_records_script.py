"""The save's records script (set_records.Writes.op) takes each topic's writes packed in
one argument: appends of one record and of many, a whole run replaced, a key deleted, over
two topics interleaved, land on exactly the keys and bytes the old one-argument-a-set
form wrote."""
from __future__ import annotations

import pytest

from cluster.adapters import hot_state, set_records
from cluster.core.replication import Replica

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def test_every_mode_lands_on_its_own_key_over_interleaved_topics(redis_url):
    with hot_state.bound_to_store():
        r = hot_state.client()
        for name, ids in ((("a", 1), [1, 2]), (("a", 2), [7]), (("b", 1), [3]), (("b", 9), [5])):
            r.set(set_records.records_key(*name), set_records.records_bytes(ids))
        writes = set_records.Writes()
        assert writes.append(("a", 1), (0, 2, 2), Replica(0, [1, 2, 4], start=0)) == (0, 3, 4)
        writes.follow(("b", 1), (0, 1, 3), Replica(0, [3, 8, 9, 10], start=0))  # many
        writes.follow(("a", 2), (0, 1, 7), Replica(0, [11, 12], start=5))  # compacted: set
        writes.delete(("b", 9))
        writes.follow(("a", 3), None, Replica(0, [20], start=0))  # a new set
        op = writes.op()
        assert [k.rsplit(":", 2)[1:] for k, _, _ in set_records.unpacked(op)] == [
            ["a", "1"], ["b", "1"], ["a", "2"], ["b", "9"], ["a", "3"]]
        script, keys, args = op.arg
        assert r.eval(script, len(keys), *keys, *args) == 5

        def held(topic: str, partition: int) -> list[int]:
            return set_records.records_from(r.get(set_records.records_key(topic, partition)))

        assert held("a", 1) == [1, 2, 4]
        assert held("b", 1) == [3, 8, 9, 10]
        assert held("a", 2) == [11, 12]
        assert not r.exists(set_records.records_key("b", 9))
        assert held("a", 3) == [20]
        # Only some sets (a piece): their entries alone.
        assert [k.rsplit(":", 1)[1] for k, _, _ in
                set_records.unpacked(writes.op([("b", 1), ("a", 3)]))] == ["1", "3"]
