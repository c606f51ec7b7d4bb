"""The simulated producers' quotas are per topic: each shard appends its partitions' share,
and the shares add up to the topic's round robin, wherever it starts."""
from __future__ import annotations

import pytest

from cluster.services.simulated_producers import TopicQuota, _advance, records_due


@pytest.mark.parametrize("parts", [1, 3, 16])
def test_the_shares_add_up_to_the_records_due_and_differ_by_at_most_one(parts):
    for n in range(0, 3 * parts + 2):
        for start in range(parts):
            shares = [TopicQuota(n, start, parts).share(p) for p in range(parts)]
            assert sum(shares) == n and max(shares) - min(shares) <= 1
            # The extra records go to the partitions from ``start`` on, round robin.
            extra = [(start + i) % parts for i in range(n % parts)]
            assert all(shares[p] == n // parts + (p in extra) for p in range(parts))


def test_the_round_robin_continues_where_the_last_tick_stopped():
    table, producer = {"partitions": list(range(4))}, {"next": 0}
    assert _advance(producer, table, 3).shares() == [1, 1, 1, 0]
    assert _advance(producer, table, 2).shares() == [1, 0, 0, 1]  # partition 3, then 0
    assert producer["next"] == 1


def test_a_shard_reserves_exactly_the_share_of_its_partitions():
    quotas = {"a": TopicQuota(10, 2, 4), "b": TopicQuota(1, 0, 2)}
    shard = [("a", 0), ("a", 3), ("b", 1), ("c", 0)]  # "c" owes nothing this tick
    assert records_due(quotas, shard) == (2 + 3) + 0
    everyone = [("a", p) for p in range(4)] + [("b", p) for p in range(2)]
    assert records_due(quotas, everyone) == 11


def test_every_partitions_share_at_once_is_each_partitions_own_share():
    for parts in (1, 2, 5, 7):
        for start in range(parts):
            for n in (0, 1, parts - 1, parts, parts + 1, 3 * parts + 2):
                quota = TopicQuota(n, start, parts)
                assert quota.shares() == [quota.share(p) for p in range(parts)], (n, start, parts)


def test_every_topics_records_go_out_in_one_call_in_the_order_of_a_call_a_topic():
    """``simulate_producers`` appends every topic's share in one call of the core: the same
    record ids on the same partitions as one ``produce_spread`` a topic, topic by topic."""
    from itertools import repeat

    from cluster.adapters.hot_types import HotState
    from cluster.core.replication import (Acks, add_topic, cluster_from_dict, cluster_to_dict,
                                          new_cluster, produce_spread, replication_step)
    from cluster.services.simulated_producers import simulate_producers

    state = new_cluster(range(3))
    add_topic(state, "a", [[0, 1, 2], [1, 2, 0], [2, 0, 1]])
    add_topic(state, "b", [[1, 0, 2], [2, 1, 0]])
    replication_step(state, 0)
    twin = cluster_from_dict(cluster_to_dict(state))
    tables = {"a": {"partitions": [0, 1, 2], "rate": 4.0},
              "b": {"partitions": [0, 1], "rate": 3.0}}
    hot = HotState(state, tables, producers={"a": {"last_ms": 1, "next": 1},
                                             "b": {"last_ms": 1}})
    simulate_producers(hot, 1001, set())  # a second after their last run
    # The reference: a call a topic, with the shares the round robin gave.
    for name, shares in (("a", [1, 2, 1]), ("b", [2, 1])):
        produce_spread(twin, list(zip(repeat(name), range(len(shares)))), shares,
                       Acks.LEADER, lost=set())
    view, twin_view = state.steady.view, twin.steady.view
    logs = {k: view(rs).replica[rs.leader].log for k, rs in state.replica_sets.items()}
    assert logs == {k: twin_view(rs).replica[rs.leader].log
                    for k, rs in twin.replica_sets.items()}
    assert logs[("a", 0)] == [0] and logs[("a", 1)] == [1, 2] and logs[("b", 0)] == [4, 5]


def test_topics_without_a_running_producer_are_passed_over_and_a_stopped_clock_stays_stopped():
    """Only topics with a rate, or whose producer ran at its last turn, are accounted
    (``_running``): a producer stopped (rate 0) stops its clock once, and started again a
    minute later owes what its rate gives from then, not a catch-up of the minute."""
    from cluster.adapters.hot_types import HotState
    from cluster.core.replication import add_topic, new_cluster, replication_step
    from cluster.services.simulated_producers import _running, producer_quotas

    state = new_cluster(range(3))
    for name in ("a", "b", "c"):
        add_topic(state, name, [[0, 1, 2], [1, 2, 0]])
    replication_step(state, 0)
    tables = {"a": {"partitions": [0, 1], "rate": 2.0}, "b": {"partitions": [0, 1], "rate": 0.0},
              "c": {"partitions": [0, 1]}}
    hot = HotState(state, tables)
    assert [n for n, _ in _running(hot)] == ["a"]
    assert producer_quotas(hot, 1000) == {}  # a's clock starts
    assert producer_quotas(hot, 2000)["a"].records == 2
    assert set(hot.producers) == {"a"}  # the idle topics' accounting is never made
    tables["a"] = {**tables["a"], "rate": 0.0}
    assert [n for n, _ in _running(hot)] == ["a"]  # its clock to stop
    assert producer_quotas(hot, 3000) == {} and hot.producers["a"]["last_ms"] is None
    assert list(_running(hot)) == []
    assert producer_quotas(hot, 60_000) == {}
    tables["a"] = {**tables["a"], "rate": 2.0}
    assert producer_quotas(hot, 61_000) == {}  # started again: no minute made up
    assert producer_quotas(hot, 62_000)["a"].records == 2
