"""A set in the steady index is saved in a short form (steady_codec, with the index's
clock) that must be, byte for byte and summary included, what ``encode_status`` gives for
the same set run without the index: checked on every steady set (appended to or levelled,
followers trailing, compacted, re-entered) after every step of the fault schedules with
the producers' appends, played in lockstep with and without the index (tests/unit/cluster/
core/replication/test_steady_sets.py); and the save's own loop (hot_save's
``_compact_and_encode``, its steady sets through the short form) against the same loop
over the run without the index, every output compared."""
from __future__ import annotations

from typing import Any

import pytest

from cluster.adapters import set_records, steady_codec
from cluster.adapters.save_encoding import compact_and_encode as _compact_and_encode
from cluster.adapters.hot_types import HotState
from cluster.adapters.set_codec import encode_status
from cluster.core.replication import (Acks, SpuOffline, SpuOnline, add_topic,
                                      cluster_from_dict, cluster_to_dict, handle, new_cluster,
                                      produce_many, produce_spread, replication_step,
                                      run_elections)
from cluster.core.replication.compaction import compact, reference_replica
from cluster.core.replication.steady import LAZY
from tests.unit.cluster.core.replication.test_steady_sets import _Pair


class _Seen:
    """What the schedules put the short form through (a check that met none proves little)."""

    def __init__(self) -> None:
        self.checked = self.appended = self.trailing = self.moved = self.rejoined = 0
        self.degraded = 0  # steady with a replica out of the LRS, its SPU offline
        self.degraded_short = 0  # of those, encoded from a template (its replica fixed in it)
        self.left: set[Any] = set()
        # (replicas, the leader's place): the encoding spells out three replicas by place.
        self.shapes: set[tuple[int, int]] = set()


def encode_steady(rs, ref, clock, memo=None):
    """The save's encoding of one steady set (steady_codec.steady_encoder), ``clock`` the
    index's, ``memo`` its templates (None: one made for this call, as at the set's second
    encoding since it joined; its first is packed whole)."""
    key = (rs.topic, rs.partition)
    if memo is None:
        memo = {key: steady_codec._SECOND}
    return steady_codec.steady_encoder(clock, memo)(key, rs, ref)


def _invariant(pair: _Pair, where: str) -> None:
    """What the short form relies on, for every steady set once the save wrote the HW a
    round levelled (``settle_levels``): the leader's HW is the set's and its LEO at least
    that; every LRS follower is not kept (``steady.LAZY``: it holds the leader's log from
    the same start up to HW, as the set's view shows); the LRS is every replica, or every
    one whose SPU is online (the others are packed whole, ``steady_codec._WHOLE``)."""
    index, state = pair.a.state.steady, pair.a.state
    for key in index.keys:
        rs = state.replica_sets[key]
        lead, view = rs.replica[rs.leader], index.view(rs)
        assert lead.hw == rs.hw == view.hw, f"seed={pair.seed} {where}: {key}"
        for s in rs.lrs:
            r, seen = rs.replica[s], view.replica[s]
            assert s == rs.leader or r.log is LAZY, f"seed={pair.seed} {where}: {key}"
            assert seen.start == lead.start and seen.hw == rs.hw, f"seed={pair.seed} {where}"
            assert s == rs.leader or seen.leo == rs.hw, f"seed={pair.seed} {where}: {key}"
        assert lead.leo >= rs.hw, f"seed={pair.seed} {where}"
        assert rs.lrs in (rs.replicas, [s for s in rs.replicas if state.spus[s]]), \
            f"seed={pair.seed} {where}: {key} LRS {rs.lrs} of {rs.replicas}"


def _check(pair: _Pair, where: str, seen: _Seen) -> None:
    """Every steady set of the run with the index, short form against the full form of the
    same set in the run without it."""
    index, sets, plain = pair.a.state.steady, pair.a.state.replica_sets, pair.b.state
    index.settle_levels(sets)  # as the save does before its loop
    _invariant(pair, where)
    for key in index.keys:
        rs, twin = sets[key], plain.replica_sets[key]
        full = encode_status(twin, reference_replica(twin))
        kept = index.memo.get(key)
        seen.moved += kept is not None and kept[0] != rs.replica[rs.leader].start
        # With the index's memo as the save keeps it (packed once while the set stays in),
        # and without.
        for memo in (index.memo, None):
            short = encode_steady(rs, reference_replica(rs), index.round_ms, memo)
            assert short == full, (f"seed={pair.seed} {where}: {key} (appended: "
                                   f"{key in index.appended}, memo: {memo is not None})")
        seen.checked += 1
        made = index.memo.get(key)
        seen.degraded_short += bool(made and len(made) > 2 and made[-1])
        seen.appended += key in index.appended
        seen.trailing += rs.hw < rs.replica[rs.leader].leo
        seen.rejoined += key in seen.left
        seen.degraded += len(rs.lrs) < len(rs.replicas)
        seen.shapes.add((len(rs.replicas), rs.replicas.index(rs.leader)))
    seen.left.update(k for k in sets if k not in index.keys)


def _play(seed: int, memo: dict | None = None, seen: _Seen | None = None) -> _Seen:
    pair = _Pair(seed)
    seen = seen or _Seen()
    if memo is not None:
        pair.a.state.steady.memo = memo
    steps = pair.a.rng.randint(30, 80)
    pair.b.rng.randint(30, 80)
    for i in range(steps):
        for run in (pair.a, pair.b):
            run.step()
        pair.same(f"step {i}")
        for run in (pair.a, pair.b):
            run.elections_pass()
        pair.tick()
        pair.same(f"step {i}, tick")
        _check(pair, f"step {i}", seen)
        for run in (pair.a, pair.b):  # as the save compacts (every replica agreeing)
            for rs in run.state.replica_sets.values():
                compact(rs, 2)
        _check(pair, f"step {i}, compacted", seen)
    return seen


def test_a_steady_sets_short_encoding_is_its_full_one_without_the_index():
    seen = _Seen()
    for seed in range(80):
        _play(seed, seen=seen)
    assert seen.checked > 1000
    # Sets appended to, with trailing followers, compacted under a kept memo and back in
    # the index after leaving it were checked too.
    assert min(seen.appended, seen.trailing, seen.moved, seen.rejoined,
               seen.degraded, seen.degraded_short) > 50, vars(seen)
    assert {(3, 0), (3, 1), (3, 2)} < seen.shapes, seen.shapes


def _saves(seed: int, retain: int, memo: dict | None = None) -> int:
    """The schedule with a save after every step, in both runs: the one with the index
    passes over the steady sets it saved and encodes the others in the short form; the
    one without encodes every set in full. Every output must be the same. Returns how
    many steady sets the short form encoded."""
    pair = _Pair(seed)
    if memo is not None:
        pair.a.state.steady.memo = memo
    for run in (pair.a, pair.b):
        # Only the save compacts (the schedules' own compaction reaches into the sets
        # behind the index, which no shell does: the save would trust marks it made).
        run._maybe_compact = lambda: None  # type: ignore[method-assign]
    hots = [HotState(run.state, {}) for run in (pair.a, pair.b)]
    short = 0
    steps = pair.a.rng.randint(30, 80)
    pair.b.rng.randint(30, 80)
    for i in range(steps):
        for run in (pair.a, pair.b):
            run.step()
            run.elections_pass()
        pair.tick()
        index = pair.a.state.steady
        short += sum(k in index.fresh for k in index.keys) if index.saved else len(index.keys)
        outs = []
        for hot in hots:
            records = set_records.Writes()
            encoded = _compact_and_encode(hot, retain, records)
            changed, keys, released = encoded.changed, encoded.keys, encoded.released
            # The lists aligned with the keys (the pieces' slices) say what the by-key
            # outputs say, runs start where the topic changes, and a released set that
            # changed has its own place in the keys.
            rows = list(zip(keys, encoded.names, encoded.values, records.aligned))
            assert rows == [(k, str(k[1]), changed[k[0]][str(k[1])], records.writes.get(k))
                            for k in keys]
            assert encoded.runs == [i for i, k in enumerate(keys)
                                    if not i or keys[i - 1][0] != k[0]]
            placed = {k for k, i in encoded.released_at.items()
                      if i < len(keys) and keys[i] == k}
            assert placed == set(released) & set(keys) == set(encoded.released_at) & set(keys)
            # The sets come in another order with the index (the steady ones last).
            outs.append((changed, sorted(rows), released, records.writes))
        where = f"seed={seed} retain={retain} step {i}"
        assert outs[0] == outs[1], where
        a, b = hots
        assert (a.raw, a.after, a.stored) == (b.raw, b.after, b.stored), where
        pair.same(where)
    return short


@pytest.mark.parametrize("retain", [2, 7, 10_000])
def test_the_saves_loop_writes_what_it_writes_without_the_index(retain):
    assert sum(_saves(seed, retain) for seed in range(40)) > 500


def test_three_replicas_with_the_leader_at_each_place():
    """The short form spells out three replicas by the leader's place; the schedules
    rarely leave a leader past the first place while the producers append, so here every
    place, trailing and levelled, before and after compaction."""
    state = new_cluster(range(3))
    add_topic(state, "t", [[0, 1, 2], [1, 2, 0], [2, 0, 1], [0, 2, 1], [1, 0, 2], [2, 1, 0]])
    at = 0
    replication_step(state, at)
    for down in ((0,), (0, 1)):  # leaders move off the first place, and the SPUs come back
        for event in [*map(SpuOffline, down), *map(SpuOnline, down)]:
            at += 10
            handle(state, event)
            run_elections(state, at, set())
            replication_step(state, at)
    keys = sorted(state.replica_sets)
    seen = set()
    for i in range(6):
        if i % 2:
            at += 10
            replication_step(state, at)
        else:
            produce_spread(state, keys, [1 + i] * len(keys), Acks.LEADER)
        # The full form on a copy: it carries the followers' clocks as the rules set them.
        twin = cluster_from_dict(cluster_to_dict(state))
        state.steady.settle_levels(state.replica_sets)  # as the save does before its loop
        for key in keys:
            rs, full = state.replica_sets[key], twin.replica_sets[key]
            assert key in state.steady.keys
            for memo in (state.steady.memo, None):
                assert encode_steady(rs, rs.replica[rs.leader], state.steady.round_ms,
                                                  memo) == encode_status(full, reference_replica(full)), (i, key)
            seen.add((rs.replicas.index(rs.leader), rs.hw < rs.replica[rs.leader].leo))
        if i == 3:
            for rs in state.replica_sets.values():
                compact(rs, 1)
                assert rs.replica[rs.leader].start > 0
    assert seen == {(place, trails) for place in range(3) for trails in (False, True)}


def test_a_topic_name_with_percent_signs():
    """The template is formatted with ``bytes %``: its fixed fields' ``%`` are escaped."""
    state = new_cluster(range(3))
    add_topic(state, "a%b%%s", [[0, 1, 2]])
    replication_step(state, 0)
    produce_many(state, [(("a%b%%s", 0), 2)], Acks.LEADER)
    rs = state.replica_sets[("a%b%%s", 0)]
    twin = cluster_from_dict(cluster_to_dict(state)).replica_sets[("a%b%%s", 0)]
    assert encode_steady(rs, rs.replica[rs.leader], state.steady.round_ms) == \
        encode_status(twin, reference_replica(twin))


def test_a_fixed_field_that_packs_as_the_templates_marker_takes_the_full_form():
    """The template marks its moving fields with one packed marker; a fixed field equal
    to it (no real epoch is) would take a moving field's place: the count catches it and
    the set is encoded whole, still ``encode_status``'s bytes."""
    state = new_cluster(range(3))
    add_topic(state, "t", [[0, 1, 2]])
    replication_step(state, 0)
    produce_many(state, [(("t", 0), 2)], Acks.LEADER)
    rs = state.replica_sets[("t", 0)]
    rs.epoch = steady_codec._MARK
    memo: dict = {("t", 0): steady_codec._SECOND}  # its second encoding: a template made
    twin = cluster_from_dict(cluster_to_dict(state)).replica_sets[("t", 0)]
    assert encode_steady(rs, rs.replica[rs.leader], state.steady.round_ms,
                                      memo) == encode_status(twin, reference_replica(twin))
    assert memo == {("t", 0): steady_codec._WHOLE}  # no template kept for it


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


def test_a_wrong_clock_is_caught(monkeypatch):
    real = encode_steady
    monkeypatch.setitem(globals(), "encode_steady",
                        lambda rs, ref, clock, memo=None: real(rs, ref, None, memo))
    with pytest.raises(AssertionError, match="seed="):
        for seed in range(80):
            _play(seed)


class _Kept(dict):
    def pop(self, key, default=None):  # never forgets a set
        return self.get(key, default)


def test_a_memo_left_behind_when_a_set_changes_is_caught():
    """The check can fail: a memo that outlives a set's leaving (an election moved its
    leader, LRS or epoch) packs the old fields."""
    with pytest.raises(AssertionError, match="memo: True"):
        for seed in range(80):
            _play(seed, _Kept())


class _Any(int):
    def __ne__(self, other):  # any log start
        return False


class _Unmoved(dict):
    def get(self, key, default=None):  # as if compaction never moved the start
        kept = super().get(key)
        if kept is None or kept[0] is None:  # none, or no template yet (``_SECOND``)
            return default if kept is None else kept
        return (_Any(kept[0]), *kept[1:])


def test_a_memo_kept_across_compaction_is_caught():
    with pytest.raises(AssertionError, match="memo: True"):
        for seed in range(80):
            _play(seed, _Unmoved())


def test_a_memo_kept_across_compaction_is_caught_in_the_save():
    with pytest.raises(AssertionError, match="retain=2"):
        for seed in range(40):
            _saves(seed, 2, _Unmoved())


def test_a_sets_first_encoding_since_it_joined_is_packed_whole_and_its_second_makes_the_template():
    """An idle set is encoded once after it joins, then passed over: a template made at its
    first encoding would never be used (a new topic's 100,000 sets paid 0.7 s for them)."""
    state = new_cluster(range(3))
    add_topic(state, "t", [[0, 1, 2]])
    replication_step(state, 0)
    rs = state.replica_sets[("t", 0)]
    memo: dict = {}
    ref = rs.replica[rs.leader]
    first = steady_codec.steady_encoder(0, memo)(("t", 0), rs, ref)
    assert first == encode_status(rs, ref) and memo == {("t", 0): steady_codec._SECOND}
    second = steady_codec.steady_encoder(0, memo)(("t", 0), rs, ref)
    assert second == first and memo[("t", 0)][0] == ref.start  # the template, kept


def test_a_set_with_a_replica_out_of_the_lrs_takes_a_template_once_the_leader_gains():
    """With an SPU down, its replica is out of the LRS and stores what it stood at: fixed
    once the leader is ahead of it (its clock is stored from then on), so it goes in the
    template as it stands. Until the leader gains a record the set is packed whole and no
    template is kept; every encoding is ``encode_status``'s, bytes and summary."""
    state = new_cluster(range(3))
    add_topic(state, "t", [[0, 1, 2]])
    at = 0
    replication_step(state, at)
    handle(state, SpuOffline(2))
    run_elections(state, at, set())
    for at in (10, 20):
        replication_step(state, at)
    key = ("t", 0)
    rs = state.replica_sets[key]
    assert key in state.steady.keys and rs.lrs == [0, 1], (state.steady.keys, rs.lrs)
    memo: dict = {key: steady_codec._SECOND}

    def both() -> tuple[Any, Any]:
        twin = cluster_from_dict(cluster_to_dict(state)).replica_sets[key]
        return (encode_steady(rs, rs.replica[rs.leader], state.steady.round_ms, memo),
                encode_status(twin, reference_replica(twin)))

    short, full = both()  # the replica out holds the leader's whole log: no template yet
    assert short == full and memo[key] is steady_codec._SECOND
    produce_many(state, [(key, 2)], Acks.LEADER)
    short, full = both()
    assert short == full
    made = memo[key]
    assert made[-1] == {2: (2, 0, 0)}, made  # its figures, fixed in the template
    replication_step(state, 30)
    produce_many(state, [(key, 1)], Acks.LEADER)
    assert memo[key] is made and key in state.steady.keys
    assert both()[0] == both()[1]  # from the template kept
