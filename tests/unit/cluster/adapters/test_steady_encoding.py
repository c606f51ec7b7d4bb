"""A set in the steady index is saved in a short form (set_codec.encode_steady, with the
index's clock) that must be, byte for byte and summary included, what ``encode_status``
gives for the same set run without the index: checked on every steady set (appended to
or levelled) after every step of the fault schedules with the producers' appends, played
in lockstep with and without the index (tests/unit/cluster/core/replication/
test_steady_sets.py), compacted as the save compacts."""
from __future__ import annotations

import pytest

from cluster.adapters.set_codec import encode_status, encode_steady
from cluster.core.replication import Acks, add_topic, new_cluster, produce_many
from cluster.core.replication import replication_step
from cluster.core.replication.compaction import compact, reference_replica
from tests.unit.cluster.core.replication.test_steady_sets import _Pair


def _check(pair: _Pair, where: str) -> int:
    """Every steady set of the run with the index, short form against the full form of the
    same set in the run without it; returns how many were checked."""
    index, sets, plain = pair.a.state.steady, pair.a.state.replica_sets, pair.b.state
    checked = 0
    for key in index.keys:
        rs, twin = sets[key], plain.replica_sets[key]
        full = encode_status(twin, reference_replica(twin))
        # With the index's memo as the save keeps it (its fields packed once while the
        # set stays in), and without.
        for memo in (index.memo, None):
            short = encode_steady(rs, reference_replica(rs), index.round_ms, memo)
            assert short == full, (f"seed={pair.seed} {where}: {key} (appended: "
                                   f"{key in index.appended}, memo: {memo is not None})")
        checked += 1
    return checked


def _play(seed: int, memo: dict | None = None) -> tuple[int, int]:
    pair = _Pair(seed)
    if memo is not None:
        pair.a.state.steady.memo = memo
    checked = appended = 0
    steps = pair.a.rng.randint(30, 80)
    pair.b.rng.randint(30, 80)
    for i in range(steps):
        for run in (pair.a, pair.b):
            run.step()
        pair.same(f"step {i}")
        pair.tick()
        pair.same(f"step {i}, tick")
        appended += len(pair.a.state.steady.appended)
        checked += _check(pair, f"step {i}")
        for run in (pair.a, pair.b):  # as the save compacts (every replica agreeing)
            for rs in run.state.replica_sets.values():
                compact(rs, 2)
        checked += _check(pair, f"step {i}, compacted")
    return checked, appended


def test_a_steady_sets_short_encoding_is_its_full_one_without_the_index():
    played = [_play(seed) for seed in range(80)]
    assert sum(c for c, _ in played) > 1000
    assert sum(a for _, a in played) > 100  # sets appended to were checked too


def test_an_appended_sets_trailing_followers_keep_the_indexs_clock():
    """The check can fail: the replicas' own clocks (not written while the set stays in
    the index) are older than the rounds it skipped, and a trailing follower stores its
    clock."""
    state = new_cluster(range(3))
    add_topic(state, "t", [[0, 1, 2]])
    replication_step(state, 0)
    replication_step(state, 50)  # skipped: the replicas' clocks stay at 0
    produce_many(state, [(("t", 0), 1)], Acks.LEADER)  # the leader is ahead
    rs = state.replica_sets[("t", 0)]
    ref = reference_replica(rs)
    assert rs.replica[1].caught_up_ms == 0
    assert encode_steady(rs, ref, 50) != encode_status(rs, ref)
    state.steady.leave(rs)  # the full rules' clocks: the last round's
    assert encode_steady(rs, ref, 50) == encode_status(rs, ref)


@pytest.mark.parametrize("seed", [5])
def test_a_wrong_clock_is_caught(monkeypatch, seed):
    from cluster.adapters import set_codec
    real = set_codec.encode_steady
    monkeypatch.setattr(set_codec, "encode_steady",
                        lambda rs, ref, clock, memo=None: real(rs, ref, None, memo))
    with pytest.raises(AssertionError, match="seed="):
        for s in range(seed, seed + 40):
            pair = _Pair(s)
            for i in range(60):
                for run in (pair.a, pair.b):
                    run.step()
                pair.tick()
                index = pair.a.state.steady
                for key in index.keys:
                    rs, twin = pair.a.state.replica_sets[key], pair.b.state.replica_sets[key]
                    assert set_codec.encode_steady(rs, reference_replica(rs), 0) == \
                        encode_status(twin, reference_replica(twin)), f"seed={s}"


def test_a_memo_left_behind_when_a_set_changes_is_caught():
    """The check can fail: a memo that outlives a set's leaving (an election moved its
    leader, LRS or epoch) packs the old fields."""

    class Kept(dict):
        def pop(self, key, default=None):  # never forgets a set
            return self.get(key, default)

    with pytest.raises(AssertionError, match="memo: True"):
        for seed in range(80):
            _play(seed, Kept())
