"""Reading records by offset costs the same at offset 10 and at offset 10,000,000."""
from __future__ import annotations

import tracemalloc

import pytest

from cluster.adapters import hot_state
from cluster.engine.store_identity import locked_for_this_store
from cluster.services.records import records_consume
from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]

DEEP = 10_000_000


@pytest.fixture
def deep_partition(redis_url):
    """A one-replica partition whose first ten million offsets were compacted away."""
    register_spus(0, online=True)
    run("topic", "create", "t", "-p", "1", "-r", "1")
    run("produce", "t", "--count", "1")
    with locked_for_this_store() as held:  # hot-state writes name the store's lease (issue 9)
        hot = hot_state.load([("t", 0)])
        rs = hot.state.replica_sets[("t", 0)]
        first = hot.state.next_record_id
        rs.replica[0].start, rs.replica[0].log = DEEP, list(range(first, first + 20))
        hot.state.next_record_id = first + 20
        rs.hw = rs.replica[0].hw = DEEP + 20
        hot_state.save(hot, held, retain=100)
    return "t"


def peak_bytes(**read) -> int:
    tracemalloc.start()
    try:
        records_consume(topic="t", **read)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_read_at_offset_ten_million_returns_the_records_there(deep_partition):
    records = records_consume(topic="t", offset=DEEP + 5, max_records=3)
    assert [r["offset"] for r in records] == [DEEP + 5, DEEP + 6, DEEP + 7]
    assert records[0]["value"] == f"record-{DEEP + 5}"


def test_compacted_offsets_are_skipped(deep_partition):
    assert records_consume(topic="t", offset=0, max_records=100) == []
    assert len(records_consume(topic="t", offset=DEEP - 5, max_records=10)) == 5


def test_a_deep_read_builds_nothing_proportional_to_the_offset(deep_partition):
    # Spelling out ten million compacted ids would take 80 MB per replica list.
    assert peak_bytes(offset=DEEP + 10, max_records=5) < 2_000_000
