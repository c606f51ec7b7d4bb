"""What a partition contributes to the kept counts, and that a change is after minus before."""
from __future__ import annotations

import random
from collections import Counter

from cluster.core.replication.failover import successor
from cluster.core.tally import (FIELDS, NO_TAKER, TOPIC_TOTAL, PartitionCounted, Tally,
                                tally_of, tally_of_columns, tally_of_topic)


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


def _counted_row_by_row(topic: int, replicas, leaders, lrs) -> Tally:
    """What each partition contributes, added one partition at a time (the docstring's rules)."""
    cells: dict[tuple[int, int], list[int]] = {}

    def bump(spu: int, name: str) -> None:
        cells.setdefault((topic, spu), [0] * len(FIELDS))[FIELDS.index(name)] += 1
    failover: Counter = Counter()
    for reps, leader, live in zip(replicas, leaders, lrs):
        bump(TOPIC_TOTAL, "partitions")
        if leader is None:
            bump(TOPIC_TOTAL, "leaderless")
        else:
            bump(leader, "leaders")
            taker = successor(list(reps), list(live), leader)
            failover[(leader, NO_TAKER if taker is None else taker)] += 1
        if len(live) < len(reps):
            bump(TOPIC_TOTAL, "under_replicated")
        for spu in reps:
            bump(spu, "replicas")
        if reps:
            bump(reps[0], "preferred")
            if reps[0] == leader:
                bump(TOPIC_TOTAL, "preferred_leading")
                bump(leader, "preferred_leading")
    return Tally(cells, failover)


def test_a_new_topic_all_led_by_preferred_leaders_counts_as_row_by_row():
    replicas = [[p % 5, (p + 1) % 5, (p + 2) % 5] for p in range(40)]
    leaders = [r[0] for r in replicas]
    for lrs in (replicas, [list(r) for r in replicas]):  # the same list, or an equal one
        assert tally_of_topic(3, replicas, leaders, lrs) == \
            _counted_row_by_row(3, replicas, leaders, lrs)
    assert tally_of_topic(3, replicas, leaders, replicas).failover[(0, 1)] == 8


def test_a_topic_with_moved_leaders_short_lrs_and_no_leader_counts_as_row_by_row():
    rng = random.Random(22)
    for _ in range(50):
        rf = rng.randrange(1, 4)
        replicas = [rng.sample(range(6), rf) for _ in range(rng.randrange(1, 30))]
        lrs = [[s for s in r if rng.random() < 0.8] for r in replicas]
        # Mostly the preferred leader leads, so one odd partition must not be missed.
        leaders = [(live[0] if rng.random() < 0.9 else rng.choice(live)) if live else None
                   for live in lrs]
        assert tally_of_topic(1, replicas, leaders, lrs) == \
            _counted_row_by_row(1, replicas, leaders, lrs)
        same_lrs = tally_of_topic(1, replicas, [r[0] for r in replicas], replicas)
        assert same_lrs == _counted_row_by_row(1, replicas, [r[0] for r in replicas], replicas)


def test_columns_of_several_topics_count_each_topic_apart():
    topics = [1, 1, 1, 2, 2, 5]
    replicas = [[0, 1], [1, 2], [2, 0], [0, 1], [1, 0], [2, 1]]
    leaders = [0, 1, 2, 0, 0, None]
    lrs = [[0, 1], [1, 2], [2, 0], [0, 1], [0], []]
    expected = Tally()
    for topic, rows in ((1, slice(0, 3)), (2, slice(3, 5)), (5, slice(5, 6))):
        expected.add(_counted_row_by_row(topic, replicas[rows], leaders[rows], lrs[rows]))
    assert tally_of_columns(topics, replicas, leaders, lrs) == expected
