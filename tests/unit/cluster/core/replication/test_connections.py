from __future__ import annotations

from itertools import permutations

from cluster.core.replication import (
    SpuOffline, add_topic, connection_count, connection_counts, handle, new_cluster,
    replication_step)


def test_followers_on_one_spu_share_one_connection_to_each_leader_spu():
    # 001's figure: sets a, b, c over SPU-1..3; b and c lead on SPU-2, followed from SPU-1.
    state = new_cluster([1, 2, 3])
    add_topic(state, "a", [[1, 2, 3]])
    add_topic(state, "b", [[2, 1, 3]])
    add_topic(state, "c", [[2, 3, 1]])
    replication_step(state)
    assert (1, 2) in state.connections
    assert connection_count(state, 1, 2) == 2  # SPU-1 -> SPU-2 and SPU-2 -> SPU-1
    assert connection_count(state, 1, 3) == 1  # only SPU-3's follower of a connects to SPU-1
    assert len(state.connections) == 4  # and (1, 2) is shared by b and c


def test_an_spu_pair_never_has_more_than_two_connections():
    state = new_cluster(range(5))
    add_topic(state, "t", [list(p) for p in permutations(range(5), 3)])
    replication_step(state)
    counts = connection_counts(state)
    assert max(counts.values()) == 2
    assert all(a < b for a, b in counts)


def test_the_connections_of_an_offline_spu_are_dropped():
    state = new_cluster([1, 2, 3])
    add_topic(state, "t", [[1, 2, 3]])
    replication_step(state)
    handle(state, SpuOffline(2))
    assert all(2 not in c for c in state.connections)
    assert connection_count(state, 1, 3) == 1
