"""Seeded random fault schedules over the pure core (see cluster/testing/faults.py for what they do).

DURABILITY_SCHEDULES (default 10000) sets how many seeds run; a failure names
the seed, and ``cluster.testing.faults.replay(seed)`` replays it.
"""
from __future__ import annotations

import os

import pytest

from cluster.core.replication import (
    Acks, ElectUncleanLeader, FollowerFetch, ProduceRequest, Replica, ReplicationTick,
    SpuOffline, SpuOnline, add_topic, election, handle, new_cluster, produce, reassign, sync,
    spu_receive_notice)
from cluster.testing import faults
from cluster.testing.invariants import InvariantChecker, InvariantViolation

SCHEDULES = int(os.environ.get("DURABILITY_SCHEDULES", "10000"))


def _any_live_replica(rs, spu, spus):
    # 001 read literally for Offline sets: any member of the list, in sync or not.
    return bool(spus.get(spu))


def _truncate_to_own_hw(rs, spu):
    # Kafka before KIP-101: followers cut to their own, possibly stale, HW.
    return sync.truncate(rs, spu, rs.replica[spu].hw, "own HW")


def _compact_past_hw(rs, retain, *, step=1):
    # Broken: forgets records the HW has not passed yet.
    target = rs.hw - retain + 2
    for r in rs.replica.values():
        r.compact_to(target)
    return target


def _copy_without_jumping(self, source, end):
    # Broken: a replica behind the source's log start appends its records at the wrong offsets.
    self.log.extend(source.log[max(0, self.leo - source.start):end - source.start])


def _first_failure(seeds: range) -> str | None:
    for seed in seeds:
        try:
            faults.run_schedule(seed)
        except InvariantViolation as exc:
            return str(exc)
    return None


@pytest.mark.slow
def test_random_fault_schedules_keep_every_invariant(capsys):
    totals = faults.run_many(SCHEDULES)
    with capsys.disabled():
        print(f"\n[durability] {totals.schedules} schedules, {totals.steps} steps, "
              f"{totals.produced} records produced, {totals.acked_all} acks=all acknowledged, "
              f"{totals.crashes} SPU crashes, {totals.elections} candidate proposals, "
              f"{totals.moves} moves ({totals.moves_completed} completed, "
              f"{totals.rollbacks} rolled back), {totals.unclean} unclean elections, "
              f"{totals.compactions} compactions, {totals.cuts} network cuts "
              f"({totals.expiries} sessions expired, {totals.inbound_cuts} one-way inbound, "
              f"{totals.missed_epochs} epochs missed by replicas deaf to the SC) "
              f"in {totals.seconds:.1f} s ({totals.steps / totals.seconds:,.0f} steps/s)")
    assert totals.schedules == SCHEDULES
    assert totals.acked_all > 0 and totals.crashes > 0 and totals.elections > 0
    assert totals.moves_completed > 0 and totals.rollbacks > 0 and totals.unclean > 0
    assert totals.compactions > 0
    assert totals.cuts > 0 and totals.expiries > 0
    assert totals.inbound_cuts > 0 and totals.missed_epochs > 0


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
    assert "replay: cluster.testing.faults.replay(" in failure


def test_fault_schedules_catch_followers_truncating_to_their_own_hw(monkeypatch):
    monkeypatch.setattr(election, "align_with_leader", _truncate_to_own_hw)
    assert _first_failure(range(1000)) is not None


def _complete_without_waiting(state, rs):
    # Broken: drops the leaving replicas before the new ones have joined the LRS.
    actions = reassign._lead_from(state, rs, rs.move.target, None)
    return [] if actions is None else actions + reassign._finish(state, rs, rs.move.target)


def _unclean_whatever_the_setting(state, rs):
    return not any(state.spus.get(s) for s in rs.lrs) and any(state.spus.get(s) for s in rs.replicas)


def test_fault_schedules_catch_a_move_that_drops_old_replicas_before_new_ones_catch_up(
        monkeypatch):
    monkeypatch.setattr(reassign, "_complete", _complete_without_waiting)
    failure = _first_failure(range(500))
    assert failure is not None and "below min_lrs" in failure


def test_fault_schedules_catch_a_rollback_that_ignores_min_lrs(monkeypatch):
    monkeypatch.setattr(reassign, "_safe_to_drop", lambda state, rs, dropped: True)
    failure = _first_failure(range(500))
    assert failure is not None and "below min_lrs" in failure


def test_fault_schedules_catch_unclean_elections_the_topic_did_not_allow(monkeypatch):
    monkeypatch.setattr(election, "_unclean_allowed", _unclean_whatever_the_setting)
    failure = _first_failure(range(500))
    assert failure is not None and "that nothing allowed" in failure


def _last_member_gone(unclean: bool):
    """LRS {1}: record 3 committed on SPU 1 only; SPU 2 lags with 2 records, then 1 dies."""
    state = new_cluster([1, 2])
    add_topic(state, "t", [[1, 2]], max_lag=0, unclean_leader_election=unclean)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 2))
    handle(state, ReplicationTick())
    handle(state, SpuOffline(2))
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    checker = InvariantChecker()
    checker.check(state)
    handle(state, SpuOffline(1))
    checker.check(state)
    return state, checker


def test_the_checker_accepts_an_unclean_election_the_topic_allows():
    state, checker = _last_member_gone(unclean=True)
    actions = handle(state, SpuOnline(2))
    checker.check(state, actions)
    assert state.replica_set("t", 0).leader == 2 and state.replica_set("t", 0).hw == 2


def test_the_checker_accepts_an_operator_override_it_was_told_about():
    state, checker = _last_member_gone(unclean=False)
    handle(state, SpuOnline(2))
    checker.allow_unclean(("t", 0))
    checker.check(state, handle(state, ElectUncleanLeader("t", 0, 2)))
    assert state.replica_set("t", 0).leader == 2


def test_the_checker_flags_an_override_it_was_not_told_about():
    state, checker = _last_member_gone(unclean=False)
    handle(state, SpuOnline(2))
    actions = handle(state, ElectUncleanLeader("t", 0, 2))
    with pytest.raises(InvariantViolation, match="that nothing allowed"):
        checker.check(state, actions)


def test_the_checker_flags_an_hw_drop_that_no_unclean_election_reported():
    state, checker = _last_member_gone(unclean=True)
    handle(state, SpuOnline(2))
    with pytest.raises(InvariantViolation, match="HW moved backwards"):
        checker.check(state)


def test_a_checker_begun_on_a_leaderless_set_takes_its_hw_as_what_is_committed_so_far():
    """A checker begun after a loss (the set restored while its SPUs are down) sees a HW it
    never saw advance: the replica holding the most says what is committed so far."""
    state, _ = _last_member_gone(unclean=False)
    rs = state.replica_set("t", 0)
    assert rs.leader is None and rs.hw == 3
    fresh = InvariantChecker()
    fresh.check(state)
    assert fresh.tracks[("t", 0)].committed == rs.replica[1].records(0, 3)


def test_the_checker_flags_a_hw_advance_without_a_leader_on_a_set_it_saw():
    state, checker = _last_member_gone(unclean=False)
    rs = state.replica_set("t", 0)
    rs.hw += 1
    with pytest.raises(InvariantViolation, match="HW advanced without a leader"):
        checker.check(state)


def test_fault_schedules_catch_compaction_of_records_not_yet_committed(monkeypatch):
    monkeypatch.setattr(faults, "compact", _compact_past_hw)
    failure = _first_failure(range(1000))
    assert failure is not None and failure.startswith("seed=")


def test_fault_schedules_catch_a_replica_that_skips_the_leaders_log_start(monkeypatch):
    monkeypatch.setattr(Replica, "copy_from", _copy_without_jumping)
    failure = _first_failure(range(1000))
    assert failure is not None and "committed offset" in failure
