from __future__ import annotations

from cluster.core.replication import (
    Acks, FollowerFetch, LeaderChanged, LrsChanged, NotifyCandidate, ProduceRequest,
    PromotionFailed, ReconcileElections, ReplicaTruncated,
    Resolution, ResolutionChanged, SpuOffline, SpuOnline, StartElectionTimer,
    TimerFired, add_topic, consume, handle, new_cluster, produce, replication_step,
    spu_receive_notice)

ONLINE, ELECTION = Resolution.ONLINE, Resolution.ELECTION
FOUND, OFFLINE = Resolution.CANDIDATE_FOUND, Resolution.OFFLINE


def cluster(replicas=(1, 2, 3), spus=(1, 2, 3, 4), **kw):
    state = new_cluster(spus, election_timeout_ms=500)
    add_topic(state, "t", [list(replicas)], **kw)
    return state, state.replica_set("t", 0)


def notices(actions):
    return [a for a in actions if isinstance(a, NotifyCandidate)]


def promote(state, actions):
    """Deliver the newest candidate notice and the candidate's report."""
    reply = spu_receive_notice(state, notices(actions)[-1])
    return handle(state, reply)


def lagging_example():
    """Leader 1 LEO 4, follower 2 LEO 3, follower 3 LEO 2: 3 has the larger lag."""
    state, rs = cluster()
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 2))
    replication_step(state)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 2))
    handle(state, FollowerFetch("t", 0, 2, max_records=1))
    return state, rs


def test_leader_going_offline_sends_every_set_it_led_to_election_then_candidate_found():
    state = new_cluster([1, 2, 3])
    add_topic(state, "t", [[1, 2, 3], [1, 3, 2], [2, 1, 3]])
    actions = handle(state, SpuOffline(1))
    changes = [(a.partition, a.old, a.new) for a in actions if isinstance(a, ResolutionChanged)]
    assert changes == [(0, ONLINE, ELECTION), (0, ELECTION, FOUND),
                       (1, ONLINE, ELECTION), (1, ELECTION, FOUND)]
    assert state.replica_set("t", 2).resolution is ONLINE
    assert {(a.partition, a.attempt) for a in actions if isinstance(a, StartElectionTimer)} == {(0, 1), (1, 1)}


def test_the_candidate_is_the_live_lrs_follower_with_the_smallest_lag():
    state, rs = lagging_example()
    actions = handle(state, SpuOffline(1))
    assert rs.candidate == 2
    [n] = notices(actions)
    assert (n.candidate, n.spus) == (2, (2, 3))


def test_equal_lag_goes_to_the_earlier_replica_in_assignment_order():
    state, rs = cluster(replicas=(1, 3, 2))
    handle(state, SpuOffline(1))
    assert rs.candidate == 3


def test_promotion_success_sets_online_updates_the_lrs_and_tells_followers():
    state, rs = lagging_example()
    actions = promote(state, handle(state, SpuOffline(1)))
    assert (rs.resolution, rs.leader, rs.lrs) == (ONLINE, 2, [2, 3])
    assert LeaderChanged("t", 0, None, 2, 2) in actions
    assert LrsChanged("t", 0, 2, (2, 3), rs.hw) == actions[-1]
    assert rs.replica[2].claims_leadership and not rs.replica[3].claims_leadership


def test_the_new_leader_keeps_the_sets_hw_so_it_never_moves_backwards():
    state, rs = lagging_example()
    handle(state, FollowerFetch("t", 0, 3))
    handle(state, FollowerFetch("t", 0, 2))
    assert rs.hw == 4 and rs.replica[3].hw == 3  # follower 3 was told HW 3 only
    promote(state, handle(state, SpuOffline(1)))
    assert rs.hw == 4 and rs.replica[rs.leader].hw == 4


def test_a_live_lrs_follower_is_not_cut_below_hw_on_a_leader_change():
    # Kafka KIP-101: truncating to a follower's own (stale) HW would drop committed records.
    state, rs = lagging_example()
    handle(state, FollowerFetch("t", 0, 3))
    handle(state, FollowerFetch("t", 0, 2))
    committed = consume(state, "t", 0).records
    promote(state, handle(state, SpuOffline(1)))
    assert tuple(rs.replica[3].log[:4]) == committed


def test_when_the_timer_fires_first_the_next_candidate_is_tried():
    state, rs = lagging_example()
    handle(state, SpuOffline(1))
    actions = handle(state, TimerFired("t", 0, 2, 1))
    assert (rs.resolution, rs.candidate, rs.attempt) == (FOUND, 3, 2)
    assert [(n.candidate, n.attempt) for n in notices(actions)] == [(3, 2)]
    promote(state, actions)
    assert rs.leader == 3


def test_with_no_candidate_left_the_set_goes_offline():
    state, rs = cluster()
    handle(state, SpuOffline(1))
    handle(state, TimerFired("t", 0, 2, 1))
    actions = handle(state, TimerFired("t", 0, 3, 2))
    assert rs.resolution is OFFLINE and rs.leader is None
    assert ResolutionChanged("t", 0, FOUND, OFFLINE, "no eligible leader candidate in the LRS") in actions


def test_a_stale_timer_for_a_settled_election_is_ignored():
    state, rs = cluster()
    promote(state, handle(state, SpuOffline(1)))
    assert handle(state, TimerFired("t", 0, 2, 1)) == []
    assert (rs.resolution, rs.leader) == (ONLINE, 2)


def test_a_timer_from_an_earlier_attempt_is_ignored_during_a_later_one():
    state, rs = cluster()
    handle(state, SpuOffline(1))
    handle(state, TimerFired("t", 0, 2, 1))
    assert handle(state, TimerFired("t", 0, 2, 1)) == []
    assert rs.candidate == 3


def test_a_late_promotion_report_from_an_earlier_candidate_is_ignored():
    state, rs = cluster()
    first = handle(state, SpuOffline(1))
    late = spu_receive_notice(state, notices(first)[0])
    second = handle(state, TimerFired("t", 0, 2, 1))
    assert handle(state, late) == []
    assert rs.resolution is FOUND
    promote(state, second)
    assert rs.leader == 3


def test_a_failed_promotion_sends_no_report_and_an_explicit_failure_moves_on():
    state, rs = cluster()
    actions = handle(state, SpuOffline(1))
    assert spu_receive_notice(state, notices(actions)[0], succeed=False) is None
    handle(state, PromotionFailed("t", 0, 2, 1))
    assert rs.candidate == 3


def test_an_spu_that_promoted_under_an_older_attempt_steps_down_on_the_next_notice():
    state, rs = cluster()
    first = handle(state, SpuOffline(1))
    spu_receive_notice(state, notices(first)[0])
    assert rs.replica[2].claims_leadership
    second = handle(state, TimerFired("t", 0, 2, 1))
    spu_receive_notice(state, notices(second)[0])
    assert [s for s in (2, 3) if rs.replica[s].claims_leadership] == [3]
    assert spu_receive_notice(state, notices(first)[0]) is None  # older than what it saw


def test_a_candidate_that_crashed_after_promoting_is_not_installed_by_its_late_report():
    # Found by the fault schedules (seed 5775): the report predates the crash.
    state, rs = cluster()
    actions = handle(state, SpuOffline(1))
    late = spu_receive_notice(state, notices(actions)[0])
    handle(state, SpuOffline(2))
    handle(state, SpuOnline(2))
    assert 2 not in rs.lrs
    assert handle(state, late) == [] and rs.leader is None


def test_an_spu_back_online_triggers_elections_for_offline_sets_it_belongs_to():
    state, rs = cluster(replicas=(1, 2))
    handle(state, SpuOffline(2))
    handle(state, SpuOffline(1))
    assert rs.resolution is OFFLINE and rs.lrs == [1]
    actions = handle(state, SpuOnline(1))
    assert [(a.old, a.new) for a in actions if isinstance(a, ResolutionChanged)] == [
        (OFFLINE, ELECTION), (ELECTION, FOUND)]
    promote(state, actions)
    assert (rs.resolution, rs.leader) == (ONLINE, 1)


def test_an_offline_set_stays_offline_when_only_a_non_lrs_replica_returns():
    state, rs = cluster(replicas=(1, 2))
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 3))
    handle(state, SpuOffline(2))  # 2 never got the records
    handle(state, SpuOffline(1))
    actions = handle(state, SpuOnline(2))
    assert rs.resolution is OFFLINE and notices(actions) == []


def test_the_last_lrs_member_stays_in_the_lrs_when_it_goes_offline():
    state, rs = cluster()
    handle(state, SpuOffline(3))
    handle(state, SpuOffline(2))
    handle(state, SpuOffline(1))
    assert rs.lrs == [1] and rs.resolution is OFFLINE


def test_a_follower_spu_going_offline_leaves_the_lrs_of_every_set_it_followed():
    state = new_cluster([1, 2, 3])
    add_topic(state, "t", [[1, 3, 2], [2, 3, 1], [3, 1, 2]])
    handle(state, SpuOffline(3))
    assert state.replica_set("t", 0).lrs == [1, 2]
    assert state.replica_set("t", 1).lrs == [2, 1]
    assert state.replica_set("t", 2).resolution is FOUND


def test_a_failed_leader_rejoins_as_a_follower_after_truncating_to_its_hw():
    state, rs = cluster()
    committed = produce(state, ProduceRequest("t", 0, Acks.ALL, 2)).record_ids
    replication_step(state)
    only_on_1 = produce(state, ProduceRequest("t", 0, Acks.LEADER, 2)).record_ids
    promote(state, handle(state, SpuOffline(1)))
    new = produce(state, ProduceRequest("t", 0, Acks.LEADER, 1)).record_ids
    actions = handle(state, SpuOnline(1))
    assert ReplicaTruncated("t", 0, 1, 4, 2, "rejoining: truncated to the HW it had",
                            only_on_1) in actions
    assert not rs.replica[1].claims_leadership and rs.leader == 2
    replication_step(state)
    assert tuple(rs.replica[1].log) == committed + new
    assert not set(only_on_1) & set(rs.replica[1].log)
    assert rs.lrs == [1, 2, 3]


def test_reconcile_retries_an_offline_set_whose_lrs_member_is_alive():
    state, rs = cluster(replicas=(1, 2))
    handle(state, SpuOffline(1))
    handle(state, TimerFired("t", 0, 2, 1))  # 2 never answered
    assert rs.resolution is OFFLINE
    actions = handle(state, ReconcileElections())
    promote(state, actions)
    assert rs.leader == 2


def test_a_candidate_restarting_before_it_answered_is_asked_again():
    state, rs = cluster(replicas=(1, 2))
    handle(state, SpuOffline(1))
    handle(state, SpuOffline(2))  # last LRS member: kept
    actions = handle(state, SpuOnline(2))
    assert [(n.candidate, n.attempt) for n in notices(actions)] == [(2, 2)]
    promote(state, actions)
    assert rs.leader == 2


def test_a_partition_with_no_committed_record_starts_on_any_online_replica():
    state = new_cluster([0, 4, 5], offline=[0, 4, 5], election_timeout_ms=500)
    add_topic(state, "t", [[0, 4, 5]])
    rs = state.replica_set("t", 0)
    actions = handle(state, SpuOnline(4))
    handle(state, SpuOnline(5))
    promote(state, actions)
    assert rs.resolution is ONLINE and rs.leader in (4, 5) and sorted(rs.lrs) == [4, 5]


def test_a_partition_with_committed_records_still_waits_for_an_lrs_member():
    state, rs = cluster(replicas=(1, 2, 3), spus=(1, 2, 3), max_lag=1)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 2))
    handle(state, FollowerFetch("t", 0, 2))  # 3 misses the round and leaves the LRS
    handle(state, SpuOffline(2))
    handle(state, SpuOffline(1))
    assert rs.hw == 2 and rs.lrs == [1] and rs.resolution is OFFLINE
