"""Seeded random fault schedules over the pure core (see faults.py for what they do).

DURABILITY_SCHEDULES (default 10000) sets how many seeds run; a failure names
the seed, and ``cluster.core.replication.faults.replay(seed)`` replays it.
"""
from __future__ import annotations

import os

import pytest

from cluster.core.replication import (
    Acks, FollowerFetch, InvariantChecker, InvariantViolation, ProduceRequest,
    SpuOffline, add_topic, election, faults, handle, new_cluster, produce, sync,
    spu_receive_notice)

SCHEDULES = int(os.environ.get("DURABILITY_SCHEDULES", "10000"))


def _any_live_replica(rs, spu, spus):
    # 001 read literally for Offline sets: any member of the list, in sync or not.
    return bool(spus.get(spu))


def _truncate_to_own_hw(rs, spu):
    # Kafka before KIP-101: followers cut to their own, possibly stale, HW.
    return sync.truncate(rs, spu, rs.replica[spu].hw, "own HW")


def _first_failure(seeds: range) -> str | None:
    for seed in seeds:
        try:
            faults.run_schedule(seed)
        except InvariantViolation as exc:
            return str(exc)
    return None


def test_random_fault_schedules_keep_every_invariant(capsys):
    totals = faults.run_many(SCHEDULES)
    with capsys.disabled():
        print(f"\n[durability] {totals.schedules} schedules, {totals.steps} steps, "
              f"{totals.produced} records produced, {totals.acked_all} acks=all acknowledged, "
              f"{totals.crashes} SPU crashes, {totals.elections} candidate proposals "
              f"in {totals.seconds:.1f} s ({totals.steps / totals.seconds:,.0f} steps/s)")
    assert totals.schedules == SCHEDULES
    assert totals.acked_all > 0 and totals.crashes > 0 and totals.elections > 0


def test_replay_reproduces_a_schedule_exactly():
    lines: list[str] = []
    assert faults.replay(42, out=lines.append) == faults.run_schedule(42)
    assert lines and any("SpuOffline" in line for line in lines)


def test_schedules_cover_replication_factors_one_to_five():
    from random import Random
    factors = {len(rs.replicas) for seed in range(200)
               for rs in faults.random_cluster(Random(seed)).replica_sets.values()}
    assert factors == {1, 2, 3, 4, 5}


def test_the_checker_catches_a_non_lrs_follower_being_elected(monkeypatch):
    state = new_cluster([1, 2, 3])
    add_topic(state, "t", [[1, 2, 3]], max_lag=1)
    checker = InvariantChecker()
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 3))  # 3 falls out of the LRS
    actions = handle(state, FollowerFetch("t", 0, 2))
    checker.check(state)
    assert checker.observe(state, actions) == 0 and state.replica_set("t", 0).lrs == [1, 2]
    monkeypatch.setattr(election, "is_eligible", _any_live_replica)
    monkeypatch.setattr(election, "choose_candidate",
                        lambda rs, spus: 3 if spus.get(3) else None)
    notice = handle(state, SpuOffline(1))[-2]
    handle(state, spu_receive_notice(state, notice))
    assert state.replica_set("t", 0).leader == 3
    with pytest.raises(InvariantViolation, match="lost committed records"):
        checker.check(state)


def test_fault_schedules_catch_001s_membership_list_election(monkeypatch):
    monkeypatch.setattr(election, "is_eligible", _any_live_replica)
    failure = _first_failure(range(200))
    assert failure is not None and failure.startswith("seed=")
    assert "replay: cluster.core.replication.faults.replay(" in failure


def test_fault_schedules_catch_followers_truncating_to_their_own_hw(monkeypatch):
    monkeypatch.setattr(election, "align_with_leader", _truncate_to_own_hw)
    assert _first_failure(range(1000)) is not None
