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

from cluster.core.replication import (Acks, ProduceRequest, ReplicationTick, SpuOffline, add_topic,
                                      cluster_to_dict, handle, new_cluster, produce_many,
                                      produce_spread,
                                      replication_step)
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
        self.skipped = self.appended = self.levelled = 0
        self.a.results, self.b.results = [], []  # type: ignore[attr-defined]

    def same(self, where: str) -> None:
        a, b = cluster_to_dict(self.a.state), cluster_to_dict(self.b.state)
        if a != b:
            diff = [(x, y) for x, y in zip(a["replica_sets"], b["replica_sets"]) if x != y]
            meta = {k: (a[k], b[k]) for k in a if k != "replica_sets" and a[k] != b[k]}
            raise AssertionError(f"seed={self.seed} {where}: with the index {diff[:1]} "
                                 f"{meta}, without it {len(diff)} sets differ")

    def tick(self) -> None:
        rng = self.ticks
        if rng.random() < 0.4:
            self.produce(rng)
        if rng.random() < 0.5:
            steady = len(self.a.state.steady.keys)
            self.levelled += len(self.a.state.steady.appended)
            # Now and then a round whose fetches may stop short (the full rules then).
            most = 1 if rng.random() < 0.1 else None
            for run in (self.a, self.b):
                run.now += 10
                run.apply(ReplicationTick(run.now, most))
            self.skipped += steady

    def produce(self, rng: Random) -> None:
        """The simulated producers' write (acks=0/1 on many sets at once), which keeps a
        steady set in the index (``appended``); not always followed by a round, so the
        schedule's own events meet sets appended to. Half the time as ``produce_many``'s
        pairs, half as the producers call it (``produce_spread``: keys and shares aligned,
        shares of none, a key with no set, and now and then a stopped leader's writes lost)."""
        keys = sorted(self.a.state.replica_sets)
        acks = rng.choice((Acks.LEADER, Acks.LEADER, Acks.NONE))
        if rng.random() < 0.5:
            counts = [(k, rng.choice((1, 1, 1, 2))) for k in keys if rng.random() < 0.7]
            call = lambda state: produce_many(state, counts, acks)  # noqa: E731
        else:
            shares = [rng.choice((0, 1, 1, 1, 2)) for _ in keys]
            if rng.random() < 0.2:
                keys, shares = [*keys, ("gone", 0)], [*shares, 1]
            stopped = set(rng.sample(self.a.spus, 1)) if rng.random() < 0.3 else set()
            lost = stopped if rng.random() < 0.9 else None
            counts = list(zip(keys, shares))
            call = lambda state: produce_spread(state, keys, shares, acks, lost=lost)  # noqa: E731
        self.appended += sum(k in self.a.state.steady.keys for k, n in counts if n)
        for run in (self.a, self.b):
            actions, outcomes = call(run.state)
            run.checker.check(run.state, actions)
            run.results.append((actions, outcomes))
        assert self.a.results[-1] == self.b.results[-1], f"seed={self.seed} produce_many"

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
    pairs = [_Pair(seed) for seed in range(SEEDS)]
    skipped = sum(pair.play() for pair in pairs)
    # The index was used: rounds skipped sets (a run that never skips proves nothing),
    # appends kept steady sets in it and rounds levelled them without the full rules.
    assert skipped > SEEDS
    assert sum(p.appended for p in pairs) > SEEDS
    assert sum(p.levelled for p in pairs) > SEEDS


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


def test_a_produced_set_is_fetched_and_rejoins_at_the_round_that_levels_it():
    state = _cluster()
    replication_step(state, 10)
    handle(state, ProduceRequest("t", 0, 1, 2))
    assert ("t", 0) not in state.steady.keys  # a produce request takes it out
    replication_step(state, 20)
    rs = state.steady.view(state.replica_sets[("t", 0)])
    assert [rs.replica[s].leo for s in rs.replicas] == [2, 2, 2] and rs.hw == 2
    # At the round that fetched: the producers' next append keeps it in.
    assert ("t", 0) in state.steady.keys


def test_the_producers_append_keeps_a_steady_set_in_and_the_round_levels_it():
    state = _cluster()
    replication_step(state, 10)
    actions, outcomes = produce_many(state, [(("t", 0), 2), (("t", 1), 1)], Acks.LEADER)
    assert actions == [] and outcomes == {None: 3}
    assert set(state.steady.appended) == {("t", 0), ("t", 1)}
    assert set(state.steady.keys) == {("t", 0), ("t", 1)}
    rs = state.replica_sets[("t", 0)]
    # Only the leader's log moved: the followers have not fetched, HW waits for them.
    view = state.steady.view(rs)
    assert [view.replica[s].leo for s in rs.replicas] == [2, 0, 0] and view.hw == rs.hw == 0
    replication_step(state, 20)
    assert not state.steady.appended and ("t", 0) in state.steady.keys
    # Levelled without a write in the set: its followers are not kept while it is steady
    # (steady.LAZY) and its HW is the leader's LEO (``levelled``) ...
    assert rs.hw == 0 and rs.replica[1].log == () and ("t", 0) in state.steady.levelled
    view = state.steady.view(rs)
    assert [(view.replica[s].leo, view.replica[s].hw) for s in rs.replicas] == [(2, 2)] * 3
    assert view.hw == 2 and view.replica[1].log == view.replica[0].log == [0, 1]
    # ... written in when a rule takes it out.
    state.steady.leave(rs)
    assert [(rs.replica[s].leo, rs.replica[s].hw) for s in rs.replicas] == [(2, 2)] * 3
    assert rs.hw == 2 and rs.replica[1].log == rs.replica[0].log == [0, 1]
    followers = cluster_to_dict(state)["replica_sets"][0]["replica_state"][1:]
    assert [f["caught_up_ms"] for f in followers] == [20, 20]


def test_a_set_the_round_levels_is_encoded_by_the_next_save():
    state = _cluster()
    replication_step(state, 10)
    produce_many(state, [(("t", 0), 1)], Acks.LEADER)
    state.steady.encoded()  # a save after the append: its bytes are the appended set's
    assert ("t", 0) in state.steady.saved
    replication_step(state, 20)
    assert ("t", 0) in state.steady.fresh and ("t", 0) not in state.steady.saved


def test_an_appended_set_dropped_behind_the_index_is_forgotten_by_the_round():
    state = _cluster()
    replication_step(state, 10)
    produce_many(state, [(("t", 0), 1), (("t", 1), 1)], Acks.LEADER)
    del state.replica_sets[("t", 0)]  # as a shell drops a set without telling the index
    replication_step(state, 20)
    assert set(state.steady.keys) == {("t", 1)} and not state.steady.appended
    assert state.steady.view(state.replica_sets[("t", 1)]).hw == 1


def test_an_acks_all_write_takes_the_set_out():
    state = _cluster()
    replication_step(state, 10)
    produce_many(state, [(("t", 0), 1)], Acks.ALL)
    assert ("t", 0) not in state.steady.keys and not state.steady.appended


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
    # Found by the comparison, or at once by an append to a follower the index does not
    # keep (steady.LAZY is immutable).
    with pytest.raises((AssertionError, AttributeError, TypeError), match="seed=|tuple"):
        for s in range(seed, seed + 200):
            _Pair(s).play()


@pytest.mark.parametrize("seed", [3, 11])
def test_a_round_that_levels_appended_sets_wrongly_is_caught(monkeypatch, seed):
    """The comparison can fail: a round that brings the followers level but leaves the
    HW behind (does not mark the sets ``levelled``) is found."""
    from cluster.core.replication import sync

    def half_level(state):
        # The followers levelled (nothing to write: the index keeps them), the HW not.
        state.steady.appended = {}

    monkeypatch.setattr(sync, "_level_appended", half_level)
    with pytest.raises(AssertionError, match="seed="):
        for s in range(seed, seed + 200):
            _Pair(s).play()


def test_the_producers_call_passes_over_a_missing_set_a_stopped_leader_and_no_record():
    """``produce_spread`` with ``lost`` (the simulated producers): those writes are neither
    appended nor refused; the other steady sets keep their append; without ``lost`` the
    missing set is refused, as ``produce_many`` refuses it."""
    state = _cluster()
    replication_step(state, 10)
    del state.replica_sets[("t", 0)]  # dropped without the index told
    keys = [("t", 0), ("t", 1)]
    actions, outcomes = produce_spread(state, keys, [1, 1], Acks.LEADER, lost=set())
    assert actions == [] and outcomes == {None: 1}
    assert state.replica_sets[("t", 1)].replica[1].log == [0]
    assert set(state.steady.appended) == {("t", 1)}
    _, outcomes = produce_spread(state, keys, [0, 2], Acks.LEADER, lost={1})  # 1 leads t/1
    assert outcomes == {} and state.next_record_id == 1
    _, outcomes = produce_spread(state, keys, [1, 1], Acks.LEADER)
    assert outcomes == {"UNKNOWN_TOPIC_OR_PARTITION": 1, None: 1}
    assert state.replica_sets[("t", 1)].replica[1].log == [0, 1]  # a refusal takes no id


def test_an_append_to_every_steady_set_and_its_round_leave_none_saved():
    """The append and the round mark every steady set at once when they touch them all
    (no probe per set): none stays saved, every one is encoded by the next save."""
    state = _cluster()
    both = {("t", 0), ("t", 1)}
    replication_step(state, 10)
    state.steady.encoded()
    assert state.steady.saved == both
    produce_spread(state, [("t", 0), ("t", 1)], [1, 1], Acks.LEADER, lost=set())
    assert not state.steady.saved and set(state.steady.fresh) == both
    state.steady.encoded()  # a save after the append
    replication_step(state, 20)
    assert not state.steady.saved and set(state.steady.fresh) == both
    assert not state.steady.appended


def test_a_steady_key_whose_set_is_gone_is_refused_in_its_run():
    """A key the index still holds but whose set is gone, with the index's count kept
    (another set loaded behind it): the run refuses that write as the full rules would,
    in its place, and appends the others."""
    state = _cluster()
    replication_step(state, 10)
    gone = state.replica_sets.pop(("t", 0))
    state.replica_sets[("u", 0)] = gone
    actions, outcomes = produce_spread(state, [("t", 0), ("t", 1)], [1, 1], Acks.LEADER)
    assert outcomes == {"UNKNOWN_TOPIC_OR_PARTITION": 1, None: 1}
    assert [a.code for a in actions] == ["UNKNOWN_TOPIC_OR_PARTITION"]
    assert state.replica_sets[("t", 1)].replica[1].log == [0]
    assert set(state.steady.appended) == {("t", 1)}


class _OffsetsPair(_Pair):
    """A pair whose every comparison also reads each steady set's offsets both ways."""
    compared = 0

    def same(self, where: str) -> None:
        super().same(where)
        steady = self.a.state.steady
        for key, rs in self.a.state.replica_sets.items():
            seen = steady.view_offsets(rs)
            view = steady.view(rs)
            if seen is None:
                assert view is rs, f"seed={self.seed} {where} {key}: steady, yet no offsets"
                continue
            whole = (view.hw, tuple((s, view.replica[s].leo, view.replica[s].hw)
                                    for s in view.replicas))
            assert seen == whole, f"seed={self.seed} {where} {key}: {seen} != {whole}"
            _OffsetsPair.compared += 1


def test_a_steady_sets_offsets_read_without_the_view_are_the_views():
    _OffsetsPair.compared = 0
    for seed in range(min(SEEDS, 100)):
        _OffsetsPair(seed).play()
    assert _OffsetsPair.compared > 1000  # steady sets, levelled and appended ones among them
