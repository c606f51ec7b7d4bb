from __future__ import annotations

from cluster.core.replication import (
    Acks, FollowerFetch, ProduceRequest, RecordsAcknowledged, ReplicationTick, SpuOffline,
    add_topic,
    choose_candidate, handle, new_cluster, produce, replication_step)
from cluster.core.replication.state import DEFAULT_MAX_LAG


def cluster(max_lag=3, **kw):
    state = new_cluster([1, 2, 3])
    add_topic(state, "t", [[1, 2, 3]], max_lag=max_lag, **kw)
    return state, state.replica_set("t", 0)


def test_default_max_lag_is_1000_records():
    state = new_cluster([1])
    add_topic(state, "t", [[1]])
    assert state.topics["t"].max_lag == DEFAULT_MAX_LAG == 1000


def test_a_follower_lagging_more_than_max_lag_leaves_the_lrs():
    state, rs = cluster(max_lag=3)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 4))
    handle(state, FollowerFetch("t", 0, 2))
    assert rs.lrs == [1, 2]
    assert rs.hw == 4  # the laggard no longer holds HW back


def test_a_follower_exactly_at_max_lag_stays_in_the_lrs():
    state, rs = cluster(max_lag=3)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 3))
    assert rs.lrs == [1, 2, 3] and rs.hw == 0


def test_a_removed_follower_keeps_receiving_records():
    state, rs = cluster(max_lag=3)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 10))
    handle(state, FollowerFetch("t", 0, 2))  # a fetch round that follower 3 missed
    assert 3 not in rs.lrs
    handle(state, FollowerFetch("t", 0, 3, max_records=2))
    assert rs.replica[3].leo == 2 and 3 not in rs.lrs


def test_a_removed_follower_rejoins_the_lrs_once_caught_up():
    state, rs = cluster(max_lag=3)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 10))
    handle(state, FollowerFetch("t", 0, 2))
    handle(state, FollowerFetch("t", 0, 3, max_records=8))
    assert 3 not in rs.lrs  # LEO 8 < HW 10
    handle(state, FollowerFetch("t", 0, 3))
    assert rs.lrs == [1, 2, 3] and rs.hw == 10


def test_a_follower_out_of_the_lrs_is_never_an_election_candidate():
    state, rs = cluster(max_lag=3)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 10))
    handle(state, FollowerFetch("t", 0, 3, max_records=5))  # out: lag 5
    rs.replica[3].log.extend(rs.replica[1].log[5:])  # even if it had the most records
    handle(state, SpuOffline(1))
    assert rs.candidate == 2 or rs.resolution.value == "Offline"
    assert choose_candidate(rs, state.spus) != 3


def test_time_rule_removes_a_follower_behind_for_longer_than_lag_time_max_ms():
    state, rs = cluster(max_lag=1000, lag_time_max_ms=100)
    replication_step(state, now_ms=0)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    handle(state, FollowerFetch("t", 0, 2, now_ms=50))
    handle(state, ReplicationTick(now_ms=100, max_records=0))
    assert rs.lrs == [1, 2, 3]  # behind for exactly the limit
    handle(state, FollowerFetch("t", 0, 2, now_ms=101))
    assert rs.lrs == [1, 2] and rs.hw == 1


def test_time_rule_keeps_an_idle_follower_that_is_caught_up():
    state, rs = cluster(max_lag=1000, lag_time_max_ms=100)
    replication_step(state, now_ms=0)
    replication_step(state, now_ms=10_000)
    assert rs.lrs == [1, 2, 3]


def test_without_a_clock_the_time_rule_is_not_applied():
    state, rs = cluster(max_lag=1000, lag_time_max_ms=1)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    for _ in range(3):
        handle(state, FollowerFetch("t", 0, 2))
    assert rs.lrs == [1, 2, 3]


def test_a_burst_larger_than_max_lag_evicts_no_follower_before_it_could_fetch():
    state, rs = cluster(max_lag=1000)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 2000))
    assert rs.lrs == [1, 2, 3]


def test_a_burst_larger_than_max_lag_keeps_followers_that_fetch_it_in_the_lrs():
    state, rs = cluster(max_lag=1000)
    replication_step(state)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 2000))
    replication_step(state)
    assert rs.lrs == [1, 2, 3] and rs.hw == 2000


def test_an_acks_all_burst_with_min_lrs_2_is_acknowledged_on_a_healthy_cluster():
    state, rs = cluster(max_lag=1000, min_lrs=2)
    result = produce(state, ProduceRequest("t", 0, Acks.ALL, 2000))
    acked = [a for a in handle(state, ReplicationTick()) if isinstance(a, RecordsAcknowledged)]
    assert result.accepted and len(acked[0].records) == 2000 and rs.lrs == [1, 2, 3]


def test_a_follower_whose_fetch_falls_behind_by_more_than_max_lag_leaves_the_lrs():
    state, rs = cluster(max_lag=1000)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 2000))
    handle(state, ReplicationTick(max_records=500))
    assert rs.lrs == [1]
