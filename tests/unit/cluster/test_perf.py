"""The GC pause, and the freezing the engine's units of work use (cluster/perf.py)."""
from __future__ import annotations

import gc
import sys
import weakref

import pytest

from cluster import perf


@pytest.fixture(autouse=True)
def thawed(monkeypatch):
    was = gc.isenabled()
    gc.enable()
    gc.unfreeze()
    gc.collect()
    monkeypatch.setattr(perf, "_fewest", None)
    monkeypatch.setattr(perf, "_checked", 0.0)
    monkeypatch.setattr(perf, "THAW_MIN_OBJECTS", 1000)
    yield
    gc.unfreeze()
    (gc.enable if was else gc.disable)()


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector can reclaim it


def check(at: float) -> bool:
    return perf.thaw_if_due(now=at * perf.THAW_CHECK_S)


def test_a_pause_turns_the_collector_off_inside_and_back_on_after():
    with perf.gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_frozen_pause_hands_what_it_built_to_no_collection_until_a_thaw():
    with perf.gc_paused(freeze=True):
        ref = weakref.ref(Node())
    assert gc.get_freeze_count() > 0
    gc.collect()
    assert ref() is not None  # frozen: full collections skip it

    assert not check(1)  # the first count is where growth is measured from
    leaked = []
    with perf.gc_paused(freeze=True):
        leaked += [Node() for _ in range(perf.THAW_MIN_OBJECTS + sys.getallocatedblocks() // 3)]
    assert check(2)
    assert gc.get_freeze_count() == 0
    assert ref() is None


def test_growth_under_a_quarter_waits_and_past_it_thaws():
    """Growth is the allocator's blocks (``sys.getallocatedblocks``), which the frozen
    objects are most of in an engine's process: counting these walked them all."""
    with perf.gc_paused(freeze=True):
        kept = [[i] for i in range(20_000)]
    assert not check(1)
    limit = sys.getallocatedblocks() * 1.25 + perf.THAW_MIN_OBJECTS
    with perf.gc_paused(freeze=True):
        while sys.getallocatedblocks() < limit - 300:  # under a quarter + the minimum
            kept += [[i] for i in range(50)]
    assert not check(2)
    with perf.gc_paused(freeze=True):
        kept += [[i] for i in range(1000)]
    assert check(3)


def test_objects_replaced_meanwhile_are_not_growth():
    with perf.gc_paused(freeze=True):
        kept = [[i] for i in range(20_000)]
    assert not check(1)
    for round_ in range(2, 12):  # every unit replaces what it keeps, as ticks do
        with perf.gc_paused(freeze=True):
            kept = [[i] for i in range(20_000)]
        assert not check(round_)


def test_counting_waits_its_interval():
    with perf.gc_paused(freeze=True):
        leaked = [Node() for _ in range(5000)]
    assert not perf.thaw_if_due(now=perf.THAW_CHECK_S)
    with perf.gc_paused(freeze=True):  # past a quarter of whatever the process holds
        leaked += [Node() for _ in range(sys.getallocatedblocks() // 2 + 2000)]
    assert not perf.thaw_if_due(now=perf.THAW_CHECK_S * 1.5)
    assert perf.thaw_if_due(now=perf.THAW_CHECK_S * 2)


def test_acyclic_objects_built_in_a_frozen_pause_are_still_freed_when_dropped():
    class Leaf:
        pass

    with perf.gc_paused(freeze=True):
        leaf = Leaf()
        ref = weakref.ref(leaf)
    del leaf
    assert ref() is None  # reference counting does not ask the collector


def test_a_loaded_server_frees_its_garbage_then_freezes_what_lives():
    garbage = weakref.ref(Node())  # a cycle nothing holds: collected, not frozen
    kept = Node()
    thresholds = gc.get_threshold()
    try:
        assert perf.freeze_loaded() > 0
        # Young collections wait for many more containers; the older generations' rule as is.
        assert gc.get_threshold() == (perf.SERVER_YOUNG_THRESHOLD, *thresholds[1:])
    finally:
        gc.set_threshold(*thresholds)
    assert garbage() is None
    assert not any(o is kept for o in gc.get_objects())  # frozen: no generation walks it
    assert gc.isenabled()
