from __future__ import annotations

from cluster.core.replication import (Acks, ProduceRequest, add_topic, new_cluster, produce,
                                      replication_step)


def three_replicas(max_lag: int = 1000):
    state = new_cluster([0, 1, 2])
    add_topic(state, "t", [[0, 1, 2]], max_lag=max_lag)
    return state, state.replica_set("t", 0)


def test_a_stopped_follower_does_not_fetch_but_stays_in_the_lrs_within_max_lag():
    state, rs = three_replicas()
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 3))
    replication_step(state, stopped={2})
    assert [rs.replica[s].leo for s in (0, 1, 2)] == [3, 3, 0]
    assert rs.lrs == [0, 1, 2] and rs.hw == 0


def test_a_stopped_follower_leaves_the_lrs_once_it_lags_beyond_max_lag():
    state, rs = three_replicas(max_lag=2)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 3))
    replication_step(state, stopped={2})
    assert rs.lrs == [0, 1] and rs.hw == 3


def test_a_stopped_leader_serves_no_fetches():
    state, rs = three_replicas()
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 3))
    replication_step(state, stopped={0})
    assert [rs.replica[s].leo for s in (0, 1, 2)] == [3, 0, 0] and rs.hw == 0
