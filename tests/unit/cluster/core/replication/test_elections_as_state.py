"""Election notices and timers as state (issue 18): run_elections needs no message."""
from __future__ import annotations

from cluster.core.replication import (Acks, ProduceRequest, Resolution, SpuOffline, add_topic,
                                      handle, new_cluster, next_deadline, produce,
                                      replication_step, run_elections)
from cluster.core.replication.acks import AckOutcome, ack_outcome, outcome_on_append

ONLINE, FOUND, OFFLINE = Resolution.ONLINE, Resolution.CANDIDATE_FOUND, Resolution.OFFLINE


def trio():
    state = new_cluster([1, 2, 3], election_timeout_ms=500)
    add_topic(state, "t", [[1, 2, 3]])
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 3))
    replication_step(state)
    return state, state.replica_set("t", 0)


def test_a_candidate_gets_a_deadline_counted_from_the_step_that_proposed_it():
    state, rs = trio()
    state.clock_ms = 10_000
    handle(state, SpuOffline(1))
    assert rs.resolution is FOUND
    assert rs.deadline_ms == 10_500 == next_deadline(state)


def test_a_live_candidate_answers_its_notice_in_the_same_pass():
    state, rs = trio()
    handle(state, SpuOffline(1))
    run_elections(state, now_ms=1)
    assert rs.resolution is ONLINE and rs.leader == 2 and rs.deadline_ms is None


def test_a_stopped_candidate_is_passed_over_once_its_deadline_is_due():
    state, rs = trio()
    state.clock_ms = 0
    handle(state, SpuOffline(1))
    run_elections(state, now_ms=499, stopped={2})
    assert rs.resolution is FOUND and rs.candidate == 2  # not due yet
    run_elections(state, now_ms=500, stopped={2})
    assert rs.resolution is ONLINE and rs.leader == 3


def test_a_set_left_candidate_found_without_a_deadline_counts_as_due():
    """State written before deadlines existed: its timer message may be gone."""
    state, rs = trio()
    handle(state, SpuOffline(1))
    rs.deadline_ms = None
    run_elections(state, now_ms=0, stopped={2})
    assert rs.leader == 3


def test_every_candidate_stopped_leaves_the_set_waiting_not_offline_for_ever():
    state, rs = trio()
    state.clock_ms = 0
    handle(state, SpuOffline(1))
    run_elections(state, now_ms=500, stopped={2, 3})
    run_elections(state, now_ms=1000, stopped={2, 3})
    assert rs.leader is None
    run_elections(state, now_ms=1600)  # the loops run again: reconcile retries
    assert rs.resolution is ONLINE


def test_an_ack_outcome_settles_once_and_never_changes():
    assert outcome_on_append(Acks.NONE) is AckOutcome.APPENDED
    assert outcome_on_append(Acks.LEADER) is AckOutcome.ACKNOWLEDGED
    pending = outcome_on_append(Acks.ALL)
    assert pending is AckOutcome.PENDING
    assert ack_outcome(pending, count=2, acked=1, failed=False, committed=False) is pending
    assert ack_outcome(pending, count=2, acked=2, failed=False, committed=False) \
        is AckOutcome.ACKNOWLEDGED
    assert ack_outcome(pending, count=2, acked=0, failed=False, committed=True) \
        is AckOutcome.ACKNOWLEDGED
    assert ack_outcome(pending, count=2, acked=1, failed=True, committed=False) \
        is AckOutcome.FAILED
    assert ack_outcome(AckOutcome.FAILED, count=1, acked=1, failed=False, committed=True) \
        is AckOutcome.FAILED
