"""Counter increments from a replication step's moves and actions (cluster/metrics/tally.py)."""
from __future__ import annotations

from cluster.core.replication import (LrsChanged, MoveCompleted, MovePhase, MoveProgressed,
                                      MoveRolledBack, MoveStarted, ProduceResult,
                                      ResolutionChanged, SpuOffline, SpuOnline, add_topic,
                                      handle, new_cluster, replication_step)
from cluster.core.replication.state import Acks, Resolution
from cluster.metrics.tally import (election_outcomes, lrs_chains, lrs_moves, move_steps,
                                   produce_outcome, produce_result)

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


def test_a_shrink_and_re_expand_within_one_step_counts_one_of_each():
    assert lrs_moves([([0, 1, 2], [0, 1], [0, 1, 2])]) == {"lrs_shrinks": 1, "lrs_expands": 1}


def lrs(partition: int, members: tuple[int, ...]) -> LrsChanged:
    return LrsChanged("t", partition, members[0], members, 0)


def test_a_chain_starts_where_the_status_event_says_the_step_began():
    chains = lrs_chains([lrs(0, (0, 1)), lrs(0, (0,))], {("t", 0): ([0, 1, 2], [0])})
    assert chains == [[[0, 1, 2], (0, 1), (0,)]]


def test_a_partition_without_a_status_event_began_the_step_where_it_ended():
    assert lrs_chains([lrs(0, (0, 1)), lrs(0, (0, 1, 2))], {}) == \
        [[(0, 1, 2), (0, 1), (0, 1, 2)]]


def test_a_change_no_action_announced_still_ends_its_chain():
    assert lrs_chains([], {("t", 3): ([0, 1], [0])}) == [[[0, 1], [0]]]
    assert lrs_chains([lrs(3, (0, 1, 2))], {("t", 3): ([0, 1], [0])}) == \
        [[[0, 1], (0, 1, 2), [0]]]


def test_the_core_s_offline_then_online_and_catch_up_in_one_step_count_a_shrink_and_an_expand():
    state = new_cluster([1, 2, 3])
    add_topic(state, "t", [[1, 2, 3]])
    replication_step(state)
    rs = state.replica_set("t", 0)
    before = list(rs.lrs)
    actions = handle(state, SpuOffline(3)) + handle(state, SpuOnline(3))
    actions += replication_step(state)
    assert sorted(rs.lrs) == sorted(before)  # the step ended where it began: no status event
    assert lrs_moves(lrs_chains(actions, {})) == {"lrs_shrinks": 1, "lrs_expands": 1}


def test_replica_moves_count_by_step():
    actions = [MoveStarted("t", 0, (0, 1), (1, 2)), MoveStarted("t", 1, (0, 1), (1, 2)),
               MoveProgressed("t", 0, MovePhase.CATCHING_UP, (), 0, 4),
               MoveCompleted("t", 0, (1, 2), 1), MoveRolledBack("t", 1, (0, 1), "timeout"),
               lrs(0, (1, 2))]
    assert move_steps(actions) == {"moves:started": 2, "moves:progressed": 1,
                                   "moves:completed": 1, "moves:rolled_back": 1}


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
