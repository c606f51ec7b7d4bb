"""Counter increments from a replication step's moves and actions (cluster/metrics/tally.py)."""
from __future__ import annotations

from cluster.core.replication import ProduceResult, ResolutionChanged
from cluster.core.replication.state import Acks, Resolution
from cluster.metrics.tally import (election_outcomes, lrs_moves, produce_outcome,
                                   produce_result)

ONLINE, ELECTION = Resolution.ONLINE, Resolution.ELECTION
CANDIDATE, OFFLINE = Resolution.CANDIDATE_FOUND, Resolution.OFFLINE


def changed(old: Resolution, new: Resolution) -> ResolutionChanged:
    return ResolutionChanged("t", 0, old, new, "why")


def test_a_partition_losing_lrs_members_counts_one_shrink_whatever_it_lost():
    assert lrs_moves([([0, 1, 2], [0])]) == {"lrs_shrinks": 1}


def test_a_partition_gaining_members_counts_one_expand():
    assert lrs_moves([([0], [0, 2]), ([1], [1, 2, 0])]) == {"lrs_expands": 2}


def test_a_swapped_member_counts_a_shrink_and_an_expand_and_a_reorder_counts_nothing():
    assert lrs_moves([([0, 1], [0, 2]), ([0, 1], [1, 0])]) == \
        {"lrs_shrinks": 1, "lrs_expands": 1}


def test_an_election_ending_with_a_leader_counts_as_elected():
    assert election_outcomes([changed(ELECTION, CANDIDATE), changed(CANDIDATE, ONLINE)]) == \
        {"elections:elected": 1}


def test_an_election_without_an_eligible_candidate_counts_as_no_candidate():
    assert election_outcomes([changed(ELECTION, OFFLINE), changed(CANDIDATE, OFFLINE)]) == \
        {"elections:no_candidate": 2}


def test_a_topic_created_online_is_not_an_election():
    assert election_outcomes([changed(OFFLINE, ONLINE), changed(ONLINE, ELECTION)]) == {}


def test_accepted_records_count_by_acks_level_and_refused_ones_by_code():
    assert produce_result(ProduceResult(True), Acks.ALL, 4) == {"produced:all": 4}
    assert produce_result(ProduceResult(True), Acks.NONE, 1) == {"produced:0": 1}
    assert produce_result(ProduceResult(False, code="NOT_LEADER"), Acks.LEADER, 3) == \
        {"refused:NOT_LEADER": 3}


def test_a_shell_outcome_is_refused_or_produced():
    assert produce_outcome("refused", "1", "NOT_LEADER", 2) == {"refused:NOT_LEADER": 2}
    assert produce_outcome("pending", "all", None, 5) == {"produced:all": 5}
