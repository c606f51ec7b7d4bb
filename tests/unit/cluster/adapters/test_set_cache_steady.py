"""The set cache hands out a steady set whole (core.replication.steady: while a set is in
the steady index its LRS followers hold no log, and its HW may be one a round levelled
without writing it). A unit's sets kept without its index, and an image's sets a complete
load leaves behind when the index goes with the load, are written whole first."""
from __future__ import annotations

from cluster.adapters.hot_types import HotState
from cluster.adapters.set_cache import Image, SetCache
from cluster.adapters.set_codec import summary
from cluster.core.replication import (Acks, ClusterState, ReplicaSet, add_topic, new_cluster,
                                      produce_many, replication_step)
from cluster.core.replication.steady import LAZY

SCOPE = ("test", ("lock",))
KEYS = [("t", 0), ("t", 1)]


def _steady() -> ClusterState:
    """Two steady sets, appended to and levelled by a round (their HW not written yet)."""
    state = new_cluster(range(3))
    add_topic(state, "t", [[0, 1, 2], [1, 2, 0]])
    replication_step(state, 0)
    produce_many(state, [(KEYS[0], 2), (KEYS[1], 1)], Acks.LEADER)
    replication_step(state, 10)
    assert set(state.steady.levelled) == set(KEYS)
    assert all(state.replica_sets[k].replica[2].log is LAZY for k in KEYS)
    return state


def _whole(rs: ReplicaSet) -> bool:
    lead = rs.replica[rs.leader]  # type: ignore[index]
    return rs.hw == lead.leo == lead.hw and all(
        r.log == lead.log and r.start == lead.start and r.hw == rs.hw
        for r in rs.replica.values())


def _image(state: ClusterState) -> Image:
    sets = state.replica_sets
    return Image(dict(sets), {k: b"status" for k in sets},
                 {k: summary(state.steady.view(rs)) for k, rs in sets.items()},
                 {k: (0, 0, None) for k in sets}, "token", frozenset({"t"}), state.steady)


def test_a_units_steady_sets_kept_without_its_index_are_whole():
    state = _steady()
    hot = HotState(state, {"t": {"partitions": [0, 1]}}, complete=False)
    for key, rs in state.replica_sets.items():
        hot.raw[key], hot.stored[key] = b"status", (0, 0, None)
        hot.after[key] = summary(state.steady.view(rs))
    cache = SetCache()
    cache.keep(SCOPE, hot)
    image = cache.images[SCOPE]
    assert not image.steady.keys and all(_whole(image.sets[k]) for k in KEYS)


def test_the_sets_a_complete_load_leaves_behind_are_whole_and_out_of_its_index():
    state = _steady()
    cache = SetCache()
    cache.images[SCOPE] = _image(state)
    index = cache.take_index(SCOPE)
    taken, _ = cache.take(SCOPE, KEYS[0], b"status")  # taken by its bytes: stays steady
    assert taken is not None and taken[0].replica[2].log is LAZY
    cache.restore_rest(SCOPE, index)  # the other one was not fetched
    assert set(index.keys) == {KEYS[0]}
    left, _ = cache.take(SCOPE, KEYS[1], b"status")
    assert left is not None and _whole(left[0])


def test_without_the_restore_a_later_take_hands_out_a_set_with_no_follower_logs():
    """What ``restore_rest`` prevents (the check above can fail)."""
    state = _steady()
    cache = SetCache()
    cache.images[SCOPE] = _image(state)
    cache.take_index(SCOPE)
    left, _ = cache.take(SCOPE, KEYS[1], b"status")
    assert left is not None and not _whole(left[0])
