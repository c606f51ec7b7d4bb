"""Planning pauses the cyclic collector and always leaves it as it found it."""
from __future__ import annotations

import gc

import pytest

from planner.core import Cluster, Spu, Topic, plan
from planner.core.planner import no_cycle_collection


@pytest.fixture
def collector_enabled():
    was = gc.isenabled()
    gc.enable()
    yield
    # Back as found, whichever way a test left it (one disables it on purpose).
    (gc.enable if was else gc.disable)()


def test_the_collector_is_paused_inside_and_enabled_again_after(collector_enabled):
    with no_cycle_collection():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_the_collector_is_enabled_again_after_an_error(collector_enabled):
    with pytest.raises(ValueError), no_cycle_collection():
        raise ValueError("planning failed")
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled(collector_enabled):
    gc.disable()
    with no_cycle_collection():
        pass
    assert not gc.isenabled()


def test_a_plan_leaves_the_collector_enabled(collector_enabled):
    cluster = Cluster(tuple(Spu(i, f"r{i % 2}") for i in range(4)),
                      (Topic("t", ((0, 1), (1, 2), (2, 3), (3, 0))),))
    plan(cluster)
    assert gc.isenabled()
