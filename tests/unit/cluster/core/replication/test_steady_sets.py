"""The steady-set index (core.replication.steady) is an encoding of the same state.

The fault schedules run twice in lockstep, once with the index and once without it,
and every set's state (clocks included) is compared after every step: a rule that
touched a steady set without taking it out of the index, or a round that skipped a
set it would have changed, shows up as a difference naming the seed and the step.
"""
from __future__ import annotations

import os
from random import Random

import pytest

from cluster.core.replication import (ProduceRequest, ReplicationTick, SpuOffline, add_topic,
                                      cluster_to_dict, handle, new_cluster, replication_step)
from cluster.core.replication.events import FollowerFetch
from cluster.testing import faults

SEEDS = int(os.environ.get("STEADY_SCHEDULES", "400"))


class _Pair:
    """One schedule played twice: ``a`` with the steady index, ``b`` without."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.a = faults._Run(seed, None)
        self.b = faults._Run(seed, None)
        self.b.state.steady.enabled = False
        # Extra whole-cluster rounds, so sets stay steady over several rounds between the
        # schedule's own events (it ticks in 5% of its steps); a stream of its own.
        self.ticks = Random(seed * 31 + 7)
        self.skipped = 0

    def same(self, where: str) -> None:
        a, b = cluster_to_dict(self.a.state), cluster_to_dict(self.b.state)
        if a != b:
            diff = [(x, y) for x, y in zip(a["replica_sets"], b["replica_sets"]) if x != y]
            meta = {k: (a[k], b[k]) for k in a if k != "replica_sets" and a[k] != b[k]}
            raise AssertionError(f"seed={self.seed} {where}: with the index {diff[:1]} "
                                 f"{meta}, without it {len(diff)} sets differ")

    def tick(self) -> None:
        if self.ticks.random() < 0.5:
            steady = len(self.a.state.steady.keys)
            for run in (self.a, self.b):
                run.now += 10
                run.apply(ReplicationTick(run.now))
            self.skipped += steady

    def play(self) -> int:
        n = self.a.rng.randint(30, 80)
        self.b.rng.randint(30, 80)
        self.same("start")
        for i in range(n):
            for run in (self.a, self.b):
                run.step()
            self.same(f"step {i}")
            for run in (self.a, self.b):
                run.elections_pass()
            self.same(f"step {i}, elections")
            self.tick()
            self.same(f"step {i}, tick")
        for run in (self.a, self.b):
            run.heal()
        self.same("heal")
        return self.skipped


def test_schedules_with_and_without_the_steady_index_leave_every_set_the_same():
    skipped = sum(_Pair(seed).play() for seed in range(SEEDS))
    # The index was used: rounds skipped sets (a run that never skips proves nothing).
    assert skipped > SEEDS


def _cluster():
    state = new_cluster(range(3))
    add_topic(state, "t", [[0, 1, 2], [1, 2, 0]])
    replication_step(state, 0)
    return state


def test_a_caught_up_set_is_skipped_and_its_clocks_read_as_the_last_round():
    state = _cluster()  # its first round (at 0) left both sets steady
    assert set(state.steady.keys) == {("t", 0), ("t", 1)}
    replication_step(state, 10)
    replication_step(state, 20)
    rs = state.replica_sets[("t", 0)]
    assert rs.replica[1].caught_up_ms == 0  # as the round that made it steady left it
    assert cluster_to_dict(state)["replica_sets"][0]["replica_state"][1]["caught_up_ms"] == 20
    handle(state, ProduceRequest("t", 0, 1, 1))
    assert ("t", 0) not in state.steady.keys and ("t", 1) in state.steady.keys
    assert rs.replica[1].caught_up_ms == 20  # set as it leaves, before the append is judged


def test_a_produced_set_is_fetched_and_rejoins_after_a_round_with_nothing_to_fetch():
    state = _cluster()
    replication_step(state, 10)
    handle(state, ProduceRequest("t", 0, 1, 2))
    replication_step(state, 20)
    rs = state.replica_sets[("t", 0)]
    assert [rs.replica[s].leo for s in rs.replicas] == [2, 2, 2] and rs.hw == 2
    # Not at the round that fetched: a busy set would leave again at its next write.
    assert ("t", 0) not in state.steady.keys
    replication_step(state, 30)
    assert ("t", 0) in state.steady.keys


def test_an_spu_going_offline_or_stopping_takes_its_sets_out():
    state = _cluster()
    replication_step(state, 10)
    replication_step(state, 20, stopped={2})
    assert not state.steady.keys  # both sets have a replica on SPU 2
    replication_step(state, 30)
    handle(state, SpuOffline(1))
    assert not state.steady.keys


def test_a_named_round_runs_its_sets_in_full():
    state = _cluster()
    replication_step(state, 10)
    handle(state, FollowerFetch("t", 0, 1, None, 15))
    assert ("t", 0) not in state.steady.keys
    replication_step(state, 20, keys=[("t", 1)])
    assert not state.steady.keys


@pytest.mark.parametrize("seed", [3, 11])
def test_a_missed_leave_is_caught(monkeypatch, seed):
    """The comparison can fail: an append that leaves its set in the index is found."""
    from cluster.core.replication import steady
    monkeypatch.setattr(steady.Steady, "leave", lambda self, rs: None)
    with pytest.raises(AssertionError, match="seed="):
        for s in range(seed, seed + 200):
            _Pair(s).play()
