"""Network cuts in the pure core: what each cut does (cluster/core/replication/links.py)."""
from __future__ import annotations

import pytest

from cluster.core.replication import (NETWORK_EXCEPTION, NOT_ENOUGH_REPLICAS, Acks,
                                      ProduceRequest, ReplicaTruncated, ReplicationError,
                                      ReplicationTick, Resolution, add_topic, cluster_from_dict,
                                      cluster_meta_to_dict, handle, ledger, links, new_cluster,
                                      produce, replication_step, run_elections)
from cluster.core.replication import election
from cluster.testing import faults
from cluster.testing.invariants import InvariantViolation
from cluster.core.replication.links import CutLinks, HealLinks, SessionExpired


def cluster(replicas=(1, 2, 3), spus=(1, 2, 3), **kw):
    state = new_cluster(spus, election_timeout_ms=100)
    add_topic(state, "t", [list(replicas)], **kw)
    return state, state.replica_set("t", 0)


def committed(state, count=2):
    ids = produce(state, ProduceRequest("t", 0, Acks.ALL, count)).record_ids
    replication_step(state)
    return ids


def expire_silent(state):
    """The SC's session timeout passes: what the shell's connection manager does."""
    actions = []
    for spu in [s for s, up in state.spus.items() if up and not links.beats(state, s)]:
        actions += handle(state, SessionExpired(spu))
    return actions + run_elections(state, state.clock_ms + 1000)


def isolate_leader(state, one_way=False):
    handle(state, CutLinks("controller", (1,), one_way=one_way, now_ms=0))
    return expire_silent(state)


def test_an_spu_cut_from_the_controller_stops_beating_and_is_offline_once_its_session_expires():
    state, rs = cluster()
    handle(state, CutLinks("controller", (1,)))
    assert not links.beats(state, 1) and links.beats(state, 2)
    assert state.spus[1] and rs.leader == 1  # nothing happens before the timeout
    isolate_leader(state)
    assert not state.spus[1] and rs.leader in (2, 3) and rs.epoch == 2
    assert rs.resolution is Resolution.ONLINE and 1 not in rs.lrs


def test_a_deposed_leader_reachable_by_producers_keeps_taking_acks_1_writes():
    state, rs = cluster()
    committed(state)
    isolate_leader(state)
    assert rs.deposed == {1: 1}
    result = produce(state, ProduceRequest("t", 0, Acks.LEADER, 3))
    assert result.accepted and result.base_offset == 2
    assert rs.replica[1].log[2:] == list(result.record_ids)
    assert rs.replica[rs.leader].leo == 2 and rs.hw == 2  # the new leader has none of them


def test_acks_all_cannot_be_acknowledged_on_a_deposed_leader():
    state, rs = cluster()
    isolate_leader(state)
    result = produce(state, ProduceRequest("t", 0, Acks.ALL, 1))
    assert not result.accepted and result.code == NOT_ENOUGH_REPLICAS
    assert "acks=all cannot be acknowledged" in result.reason


def test_a_deposed_leader_rejoining_is_fenced_and_its_writes_are_truncated_and_reported():
    state, rs = cluster()
    committed(state)
    isolate_leader(state)
    lost = produce(state, ProduceRequest("t", 0, Acks.LEADER, 3)).record_ids
    kept = produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))  # still the deposed one
    healed = links.heal(state)
    cut = [a for a in healed.actions if isinstance(a, ReplicaTruncated) and a.spu == 1]
    assert healed.rejoined == [1] and not rs.deposed
    assert [(a.old_leo, a.new_leo) for a in cut] == [(6, 2)]
    assert cut[0].records == (*lost, *kept.record_ids)
    new = produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    replication_step(state)
    assert new.base_offset == 2 and rs.replica[1].log == rs.replica[rs.leader].log


def test_the_rehearsal_reports_every_truncated_acks_1_write_with_its_offset():
    state, rs = cluster()
    committed(state)
    handle(state, CutLinks("controller", (1,), now_ms=0))
    ledger.account(state, expire_silent(state), 0)
    result = produce(state, ProduceRequest("t", 0, Acks.LEADER, 2))
    ledger.account(state, result.actions, 10)
    refused = produce(state, ProduceRequest("t", 0, Acks.ALL, 1))
    ledger.account(state, refused.actions, 20)
    ledger.account(state, links.heal(state).actions, 30)
    report = ledger.report(state, 40)
    assert report["acks1_truncated_count"] == 2 and report["healed_ms"] is not None
    assert [(r["offset"], r["record"]) for r in report["acks1_truncated"]] == [
        (2, result.record_ids[0]), (3, result.record_ids[1])]
    assert report["refused_total"] == 1 and report["acknowledged_kept"]["acks_1"] == 0
    assert set(state.rehearsal) == {"settled", "healed_ms"}  # settled: only the report stays


def test_a_one_way_cut_leader_hears_the_new_epoch_and_takes_no_write():
    state, rs = cluster()
    isolate_leader(state, one_way=True)
    assert not rs.deposed and rs.leader in (2, 3)
    result = produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    assert result.accepted and rs.replica[rs.leader].leo == 1 and rs.replica[1].leo == 0


def test_a_one_way_cut_leader_keeps_its_unfetched_acks_1_tail_until_the_heal_cuts_it():
    """Issue 36: what a one-way cut costs is the acks=1 tail its followers had not fetched
    when its session expired; kept (LEO over HW) for the whole cut, cut and reported at the
    heal, as docs/network-partitions.md says. Fetched records and acks=all ones are kept."""
    state, rs = cluster()
    committed(state)
    handle(state, CutLinks("controller", (1,), one_way=True, now_ms=0))
    ledger.account(state, [], 0)
    fetched = produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    replication_step(state)  # the SPU links work: its followers still fetch from it
    tail = produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))  # after the last fetch
    ledger.account(state, [*fetched.actions, *tail.actions], 10)
    ledger.account(state, expire_silent(state), 20)
    assert not rs.deposed and rs.leader in (2, 3) and rs.hw == 3
    for _ in range(3):
        ledger.account(state, replication_step(state), 30)
    assert (rs.replica[1].leo, rs.hw) == (4, 3)  # offline to the SC, it fetches from nobody
    cut = [a for a in links.heal(state).actions if isinstance(a, ReplicaTruncated)]
    ledger.account(state, cut, 40)
    assert [(a.spu, a.old_leo, a.new_leo, a.records) for a in cut] == \
        [(1, 4, 3, tail.record_ids)]
    report = ledger.report(state, 50)
    assert [(r["offset"], r["record"]) for r in report["acks1_truncated"]] == \
        [(3, tail.record_ids[0])]


def test_a_follower_cut_from_its_leader_leaves_the_lrs_by_lag_and_catches_up_after_heal():
    state, rs = cluster(max_lag=2)
    handle(state, CutLinks("spu", (3,), peers=(1,)))
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 5))
    handle(state, ReplicationTick(0))
    assert rs.lrs == [1, 2] and rs.replica[3].leo == 0 and state.spus[3]
    handle(state, HealLinks())
    handle(state, ReplicationTick(10))
    # Steady again: its followers as the index keeps them (core.replication.steady).
    assert rs.lrs == [1, 2, 3] and state.steady.view(rs).replica[3].leo == 5


def test_a_cut_follower_stays_cut_when_another_set_fetched_earlier_in_the_same_step():
    state = new_cluster((1, 2, 3), election_timeout_ms=100)
    # "a" is stepped first; its follower 3 pulls from leader 2, an uncut link.
    add_topic(state, "a", [[2, 3, 1]])
    add_topic(state, "t", [[1, 2, 3]], max_lag=2)
    cut_set = state.replica_set("t", 0)
    handle(state, CutLinks("spu", (3,), peers=(1,)))
    produce(state, ProduceRequest("a", 0, Acks.LEADER, 1))
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 5))
    handle(state, ReplicationTick(0))
    assert state.replica_set("a", 0).replica[3].leo == 1
    assert cut_set.replica[3].leo == 0 and cut_set.lrs == [1, 2]


def test_a_one_way_spu_cut_stops_fetches_too():
    state, rs = cluster(max_lag=0)
    handle(state, CutLinks("spu", (1,), peers=(2,), one_way=True))
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    handle(state, ReplicationTick(0))
    assert rs.replica[2].leo == 0 and 2 not in rs.lrs and rs.replica[3].leo == 1


def test_producers_cut_from_the_leader_are_refused_and_counted():
    state, rs = cluster()
    handle(state, CutLinks("producers", (1,), now_ms=0))
    result = produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    assert not result.accepted and result.code == NETWORK_EXCEPTION
    ledger.account(state, result.actions, 5)
    assert ledger.report(state, 5)["refused"] == {"t/0": 1}


def test_a_candidate_cut_from_the_controller_answers_no_notice():
    state, rs = cluster(replicas=(1, 2, 3))
    handle(state, CutLinks("controller", (2,), one_way=True))
    state.clock_ms = 0
    handle(state, SessionExpired(1, running=False))  # the leader crashes
    run_elections(state, 0)
    assert rs.resolution is Resolution.CANDIDATE_FOUND  # 2 (or 3) asked, 2 cannot answer
    run_elections(state, 500)
    assert rs.leader == 3


def test_a_rack_split_leaves_leaderless_the_partitions_whose_lrs_is_all_on_the_cut_side():
    state = new_cluster([1, 2, 3, 4], election_timeout_ms=100)
    add_topic(state, "t", [[1, 2], [3, 1]])
    handle(state, CutLinks("racks", (1, 2), peers=(3, 4), racks=("a",)))
    expire_silent(state)
    inside, across = state.replica_set("t", 0), state.replica_set("t", 1)
    assert inside.resolution is Resolution.OFFLINE and inside.leader is None
    assert across.leader == 3
    links.heal(state)
    run_elections(state, 5000)
    assert inside.resolution is Resolution.ONLINE and state.spus[1] and state.spus[2]


def test_bad_cuts_are_refused_before_anything_changes():
    state, _ = cluster()
    with pytest.raises(ReplicationError, match="unknown SPU"):
        links.cut_links(state, CutLinks("controller", (9,)))
    with pytest.raises(ReplicationError, match="apart"):
        links.cut_links(state, CutLinks("spu", (1,), peers=(1,)))
    with pytest.raises(ReplicationError, match="no cut 7"):
        links.heal(state, 7)
    assert state.cuts == []


def test_cuts_and_expired_sessions_survive_the_meta_round_trip():
    state, rs = cluster()
    isolate_leader(state)
    back = cluster_from_dict({**cluster_meta_to_dict(state), "replica_sets": []})
    assert back.cuts == state.cuts and back.expired == state.expired
    assert back.rehearsal == state.rehearsal and not links.beats(back, 1)


def _silent_rejoin(state, spu):
    # Broken: the deposed leader drops what it wrote on its own, unreported.
    for rs in state.sets_of(spu):
        if spu in rs.deposed:
            rs.replica[spu].truncate(rs.replica[spu].hw)
    return _real_rejoin(state, spu)


_real_rejoin = links.rejoin


def _first_failure(seeds):
    for seed in seeds:
        try:
            faults.run_schedule(seed)
        except InvariantViolation as exc:
            return str(exc)
    return None


def test_the_fault_schedules_catch_a_truncation_nobody_reported(monkeypatch):
    monkeypatch.setattr(links, "rejoin", _silent_rejoin)
    failure = _first_failure(range(400))
    assert failure is not None and "without a truncation report" in failure


def test_the_fault_schedules_catch_two_leaders_accepted_in_one_epoch(monkeypatch):
    real = election.install_leader

    def same_epoch(state, rs, spu, old=None):
        # Broken: a new leader keeps the deposed leader's epoch (no fencing).
        epoch = rs.epoch
        actions = real(state, rs, spu, old)
        rs.epoch = max(epoch, 1)
        return actions

    monkeypatch.setattr(election, "install_leader", same_epoch)
    failure = _first_failure(range(400))
    assert failure is not None and "accepted two leaders" in failure


def test_the_ledger_lists_the_acks_1_writes_a_cut_puts_at_risk_until_they_commit(monkeypatch):
    monkeypatch.setattr(ledger, "LIMIT", 4)
    state, rs = cluster(max_lag=0)
    handle(state, CutLinks("spu", (2,), peers=(1,), now_ms=0))  # the leader is touched
    for _ in range(3):
        ledger.account(state, produce(state, ProduceRequest("t", 0, Acks.LEADER, 1)).actions, 0)
        assert state.rehearsal["acks1"]  # listed: a cut touches its leader
        replication_step(state)  # follower 3 fetches: committed by the LRS {1, 3}
    report = ledger.report(state, 0)
    assert report["acknowledged_kept"]["acks_1"] == 3 and not report["capped"]
    assert len(state.rehearsal["acks1"]) < 3  # the committed ones were forgotten


def test_the_ledger_only_counts_acks_1_writes_no_cut_touches():
    state = new_cluster([1, 2, 3, 4], election_timeout_ms=100)
    add_topic(state, "t", [[1, 2, 3]])
    handle(state, CutLinks("producers", (4,), now_ms=0))
    ledger.account(state, produce(state, ProduceRequest("t", 0, Acks.LEADER, 2)).actions, 0)
    assert state.rehearsal["acks1"] == [] and state.rehearsal["acked"]["1"] == 2


def test_a_rehearsal_with_steps_its_ledger_never_saw_says_its_counts_are_incomplete():
    state, rs = cluster()
    handle(state, CutLinks("producers", (1,), now_ms=0))
    assert ledger.report(state, 1)["counts_complete"]
    ledger.partial(state)  # the shell ran shard units meanwhile
    links.heal(state)
    ledger.account(state, [], 2)
    assert ledger.report(state, 3)["settled"] and not ledger.report(state, 3)["counts_complete"]
    handle(state, CutLinks("producers", (1,), now_ms=4))  # a new rehearsal starts complete
    assert ledger.report(state, 5)["counts_complete"]
