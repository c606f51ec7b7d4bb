"""The GC pause, and the freezing the engine's units of work use (webapp/perf.py)."""
from __future__ import annotations

import gc
import weakref

import pytest

from webapp import perf


@pytest.fixture(autouse=True)
def thawed():
    was = gc.isenabled()
    gc.enable()
    gc.unfreeze()
    yield
    gc.unfreeze()
    (gc.enable if was else gc.disable)()


class Node:
    def __init__(self) -> None:
        self.me = self  # a cycle: only the collector can reclaim it


def test_a_pause_turns_the_collector_off_inside_and_back_on_after():
    assert gc.isenabled()
    with perf.gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_frozen_pause_hands_what_it_built_to_no_collection_until_the_thaw(thawed, monkeypatch):
    with perf.gc_paused(freeze=True):
        ref = weakref.ref(Node())
    assert gc.get_freeze_count() > 0
    gc.collect()
    assert ref() is not None  # frozen: full collections skip it

    monkeypatch.setattr(perf, "_last_thaw", 0.0)
    assert perf.thaw_if_due(now=perf.THAW_EVERY_S + 1)
    assert gc.get_freeze_count() == 0
    assert ref() is None


def test_the_thaw_waits_its_interval(thawed, monkeypatch):
    monkeypatch.setattr(perf, "_last_thaw", 100.0)
    with perf.gc_paused(freeze=True):
        pass
    assert not perf.thaw_if_due(now=100.0 + perf.THAW_EVERY_S - 1)
    assert gc.get_freeze_count() > 0
    assert perf.thaw_if_due(now=100.0 + perf.THAW_EVERY_S)


def test_acyclic_objects_built_in_a_frozen_pause_are_still_freed_when_dropped(thawed):
    class Leaf:
        pass

    with perf.gc_paused(freeze=True):
        leaf = Leaf()
        ref = weakref.ref(leaf)
    del leaf
    assert ref() is None  # reference counting does not ask the collector
