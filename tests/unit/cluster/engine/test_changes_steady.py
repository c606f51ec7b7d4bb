"""The log's ``changes`` with the steady index (engine/entries.py) passes over the sets that
stayed in it since the last save: checked against the general pass (every set compared)
over the fault schedules with the producers' appends, played in lockstep with and without
the index (tests/unit/cluster/core/replication/test_steady_sets.py), with a save summing
up the sets after every event of the run with the index."""
from __future__ import annotations

from random import Random
from typing import Any

import pytest

from cluster.adapters.set_codec import Summary, summary
from cluster.core.replication import Key
from cluster.core.replication.steady import Steady
from cluster.engine.entries import changes
from tests.unit.cluster.core.replication.test_steady_sets import _Pair


class _Saves:
    """The saves of the run with the index: ``after`` holds every set whose summary moved
    and, as the real save's re-encoded sets, some whose summary did not (a clock moved)."""

    def __init__(self, seed: int) -> None:
        self.before: dict[Key, Summary] = {}
        self.rng = Random(seed * 13 + 5)
        self.stayed = self.moved = self.quick = self.whole = 0

    def save(self, pair: _Pair, where: str) -> None:
        state = pair.a.state
        now = {k: summary(rs) for k, rs in state.replica_sets.items()}
        after = {k: s for k, s in now.items()
                 if self.before.get(k) != s or self.rng.random() < 0.3}
        if self.rng.random() < 0.2:  # another order than ``before``'s: looked up by key
            items = list(after.items())
            self.rng.shuffle(items)
            after = dict(items)
        steady = state.steady
        stayed = sum(k in steady.keys and k not in steady.joined for k in after)
        # The sets passed over in a busy tick's case: none joined since the last save,
        # none is new.
        if not steady.joined and after.keys() <= self.before.keys():
            self.quick += stayed
        # Every loaded set saved, in ``before``'s order, none out of the index: none tested.
        if (not steady.joined and list(after) == list(self.before) == list(state.replica_sets)
                and after.keys() == steady.keys.keys()):
            self.whole += 1
        plain = changes(self.before, after)
        fast = changes(self.before, after, steady, state.replica_sets)
        assert fast == plain, f"seed={pair.seed} {where}: {fast} != {plain}"
        assert not steady.joined  # marked for the next save
        self.stayed += stayed
        self.moved += len(plain.moved)
        self.before.update(after)


def _play(seed: int) -> _Saves:
    pair, saves = _Pair(seed), _Saves(seed)
    steps = pair.a.rng.randint(30, 80)
    pair.b.rng.randint(30, 80)
    saves.save(pair, "start")
    for i in range(steps):
        for run in (pair.a, pair.b):
            run.step()
        saves.save(pair, f"step {i}")
        for run in (pair.a, pair.b):
            run.elections_pass()
        saves.save(pair, f"step {i}, elections")
        pair.tick()
        saves.save(pair, f"step {i}, tick")
    pair.same("end")
    return saves


def test_changes_with_the_steady_index_are_the_general_ones():
    played = [_play(seed) for seed in range(120)]
    # The short path was taken (sets passed over) and the schedules moved statuses.
    assert sum(s.stayed for s in played) > 1000
    assert sum(s.moved for s in played) > 1000
    assert sum(s.quick for s in played) > 100
    assert sum(s.whole for s in played) > 50


def test_a_set_entering_unnoted_is_caught(monkeypatch):
    """The comparison can fail: a set that joined the index since the last save but is
    taken as having stayed in (its status moved before it joined) is found."""
    enter = Steady.enter

    def unnoted(self: Steady, key: Key, rs: Any) -> None:
        enter(self, key, rs)
        self.joined.pop(key, None)

    monkeypatch.setattr(Steady, "enter", unnoted)
    with pytest.raises(AssertionError, match="seed="):
        for seed in range(200):
            _play(seed)


def test_a_new_set_under_a_steady_key_is_moved():
    """A set ``before`` lacks is new (moved), even under a key the index holds."""
    steady = Steady()
    steady.keys[("t", 0)] = None  # in, and not joined since the last mark
    s = Summary(1, (1,), None, 0, 0, ((1, 0, 0),), 0)  # type: ignore[arg-type]
    found = changes({}, {("t", 0): s}, steady)
    assert found.moved == found.differs == [("t", 0)]


def test_a_set_out_of_an_index_with_a_stale_key_is_tested():
    """Every loaded set saved and as many keys in the index as sets, one of them a set no
    longer loaded: the loaded set out of the index is still tested (``unsteady_keys``)."""
    s = Summary(1, (1, 2), None, 5, 5, ((1, 5, 5), (2, 5, 5)), 0)  # type: ignore[arg-type]
    moved = s._replace(leader=2)
    steady = Steady()
    steady.keys = {("t", 0): None, ("gone", 0): None}
    sets = {("t", 0): object(), ("t", 1): object()}
    found = changes({("t", 0): s, ("t", 1): s}, {("t", 0): s, ("t", 1): moved}, steady,
                    sets)  # type: ignore[arg-type]
    assert found.moved == found.differs == [("t", 1)]
