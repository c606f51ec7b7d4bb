"""What a partition contributes to the kept counts, and that a change is after minus before."""
from __future__ import annotations

from cluster.core.tally import (FIELDS, NO_TAKER, TOPIC_TOTAL, PartitionCounted, Tally,
                                tally_of, tally_of_columns)


def _cell(tally: Tally, topic: int, spu: int) -> dict[str, int]:
    return dict(zip(FIELDS, tally.cells.get((topic, spu), [0] * len(FIELDS))))


def test_a_partition_led_by_its_preferred_leader_counts_once_per_replica():
    tally = tally_of([PartitionCounted(1, [4, 5, 6], 4, [4, 5, 6])])
    assert _cell(tally, 1, TOPIC_TOTAL) == {**dict.fromkeys(FIELDS, 0), "partitions": 1,
                                            "preferred_leading": 1}
    assert _cell(tally, 1, 4) == {**dict.fromkeys(FIELDS, 0), "replicas": 1, "leaders": 1,
                                  "preferred": 1, "preferred_leading": 1}
    assert _cell(tally, 1, 6)["replicas"] == 1 and _cell(tally, 1, 6)["leaders"] == 0
    assert tally.failover == {(4, 5): 1}


def test_a_leaderless_short_partition_is_leaderless_and_under_replicated():
    tally = tally_of([PartitionCounted(1, [4, 5, 6], None, [4])])
    total = _cell(tally, 1, TOPIC_TOTAL)
    assert (total["leaderless"], total["under_replicated"]) == (1, 1)
    assert not tally.failover


def test_the_failover_skips_replicas_outside_the_lrs_and_may_find_nobody():
    tally = tally_of([PartitionCounted(1, [4, 5, 6], 4, [4, 6]),
                      PartitionCounted(1, [7, 8, 9], 8, [8])])
    assert tally.failover == {(4, 6): 1, (8, NO_TAKER): 1}


def test_a_change_counted_as_after_minus_before_leaves_what_did_not_move():
    before = [PartitionCounted(1, [4, 5, 6], 4, [4, 5, 6])]
    after = [PartitionCounted(1, [4, 5, 6], 5, [5, 6])]
    delta = tally_of(after)
    delta.add(tally_of(before), sign=-1)
    delta = delta.nonzero()
    assert delta.cells[(1, 4)] == [0, 0, 0, 0, -1, 0, -1]
    assert delta.cells[(1, 5)][FIELDS.index("leaders")] == 1
    assert (1, 6) not in delta.cells  # a follower before and after


def test_columns_and_rows_count_alike():
    rows = [PartitionCounted(t, [t, t + 1], t if t % 2 else None, [t]) for t in range(6)]
    columns = tally_of_columns([r.topic for r in rows], [r.replicas for r in rows],
                               [r.leader for r in rows], [r.lrs for r in rows])
    assert columns == tally_of(rows)
