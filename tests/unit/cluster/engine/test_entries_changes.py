"""One pass tells the saved sets whose logged status moved from those whose figures moved."""
from __future__ import annotations

from cluster.adapters.set_codec import Summary
from cluster.core.replication import Resolution
from cluster.engine.entries import changes

ONLINE, OFFLINE = Resolution.ONLINE, Resolution.OFFLINE


def summary(leader=1, lrs=(1, 2, 3), resolution=ONLINE, hw=10, leo=10,
            replicas=((1, 10, 10), (2, 10, 10), (3, 10, 10)), epoch=0) -> Summary:
    return Summary(leader, lrs, resolution, hw, leo, replicas, epoch)


def test_offsets_alone_differ_without_moving_the_logged_status():
    found = changes({("t", 0): summary()}, {("t", 0): summary(hw=11, leo=12)})
    assert found.moved == [] and found.differs == [("t", 0)]


def test_an_unchanged_summary_is_in_neither_list():
    found = changes({("t", 0): summary()}, {("t", 0): summary()})
    assert found.moved == [] and found.differs == []


def test_leader_lrs_resolution_epoch_or_replicas_moving_is_a_status_move():
    before = {("t", i): summary() for i in range(5)}
    after = {("t", 0): summary(leader=2),
             ("t", 1): summary(lrs=(1, 2)),
             ("t", 2): summary(resolution=OFFLINE, leader=None, leo=None),
             ("t", 3): summary(epoch=1),
             ("t", 4): summary(replicas=((1, 10, 10), (2, 10, 10), (4, 0, 0)))}
    found = changes(before, after)
    assert found.moved == found.differs == sorted(after)


def test_a_set_saved_for_the_first_time_is_new_to_both():
    found = changes({}, {("t", 0): summary()})
    assert found.moved == found.differs == [("t", 0)]
