"""The offsets mirror keeps what it last wrote and each row's reservation for a store of
a million partitions: bounded at 400,000, a process stepping 1,000,000 partitions (or a
worker whose shards hold more than 400,000) dropped the reservations after every unit and
read every row's again from the store at its next. Past MAX_ROWS_KEPT it still starts
over."""
from __future__ import annotations

from cluster.adapters.set_codec import Summary
from cluster.core.replication import Resolution
from cluster.engine import mirror
from cluster.engine.mirror import OffsetsMirror

SUMMARY = Summary(1, (1, 2, 3), Resolution.ONLINE, 8, 8, ())


def _kept(rows: int) -> OffsetsMirror:
    m = OffsetsMirror()
    per_topic = 100_000
    for topic in range(rows // per_topic):
        m.reserved[("store", topic)] = dict.fromkeys(range(per_topic), 64)
    m.written.update(((("store", pk), SUMMARY) for pk in range(rows)))
    return m


def test_a_million_rows_reservations_and_writes_are_kept():
    m = _kept(1_000_000)
    m._bound_kept()
    assert len(m.written) == 1_000_000
    assert sum(map(len, m.reserved.values())) == 1_000_000


def test_past_the_bound_both_start_over():
    m = _kept(mirror.MAX_ROWS_KEPT + 100_000)
    m._bound_kept()
    assert m.written == {} and m.reserved == {}
