"""Unclean leader election: a per-topic setting, an operator override, or a wait (004)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from cluster.core.replication import (
    Acks, ElectUncleanLeader, ProduceRequest, ReconcileElections, ReplicationError,
    ReplicationTick, Resolution, SpuOffline, SpuOnline, UncleanLeaderElected, replication_step,
    add_topic, consume, handle, new_cluster, produce, waiting_for)


def _last_lrs_member_gone(unclean: bool = False):
    """[1, 2, 3]: 2 and 3 hold 2 records and go down; 1 commits a third alone, then dies."""
    state = new_cluster([1, 2, 3])
    add_topic(state, "t", [[1, 2, 3]], max_lag=0, unclean_leader_election=unclean)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 2))
    handle(state, ReplicationTick())
    handle(state, SpuOffline(2))
    handle(state, SpuOffline(3))
    produce(state, ProduceRequest("t", 0, Acks.ALL, 1))
    handle(state, SpuOffline(1))
    return state


def _unclean(actions):
    return [a for a in actions if isinstance(a, UncleanLeaderElected)]


def test_an_offline_partition_names_the_last_lrs_member_it_waits_for():
    state = _last_lrs_member_gone()
    rs = state.replica_set("t", 0)
    assert rs.resolution is Resolution.OFFLINE and rs.hw == 3
    assert waiting_for(rs, state.spus) == (1,)


def test_without_the_setting_a_returning_out_of_sync_replica_does_not_lead():
    state = _last_lrs_member_gone()
    actions = handle(state, SpuOnline(2)) + handle(state, ReconcileElections())
    rs = state.replica_set("t", 0)
    assert _unclean(actions) == [] and rs.resolution is Resolution.OFFLINE
    assert waiting_for(rs, state.spus) == (1,)


def test_with_the_setting_a_returning_replica_leads_and_the_offsets_given_up_are_reported():
    state = _last_lrs_member_gone(unclean=True)
    actions = handle(state, SpuOnline(2))
    assert _unclean(actions) == [UncleanLeaderElected("t", 0, 2, 3, 2, 1, False)]
    rs = state.replica_set("t", 0)
    assert rs.leader == 2 and rs.hw == 2 and rs.lrs == [2]
    assert waiting_for(rs, state.spus) == ()
    assert consume(state, "t", 0).records == (0, 1)


def test_with_the_setting_a_live_out_of_sync_replica_leads_as_soon_as_the_last_member_dies():
    state = new_cluster([1, 2])
    add_topic(state, "t", [[1, 2]], max_lag=0, unclean_leader_election=True)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 2))
    replication_step(state, stopped={2})  # a fetch round 2 misses: it falls out of the LRS
    actions = handle(state, SpuOffline(1))
    assert _unclean(actions) == [UncleanLeaderElected("t", 0, 2, 2, 0, 2, False)]
    assert state.replica_set("t", 0).leader == 2


def test_a_setting_turned_on_later_takes_effect_at_the_next_reconcile():
    state = _last_lrs_member_gone()
    handle(state, SpuOnline(3))
    state.topics["t"] = replace(state.topics["t"], unclean_leader_election=True)
    actions = handle(state, ReconcileElections())
    assert _unclean(actions) == [UncleanLeaderElected("t", 0, 3, 3, 2, 1, False)]


def test_the_operator_override_elects_the_named_spu_whatever_the_setting():
    state = _last_lrs_member_gone()
    handle(state, SpuOnline(2))
    handle(state, SpuOnline(3))
    actions = handle(state, ElectUncleanLeader("t", 0, 3))
    assert _unclean(actions) == [UncleanLeaderElected("t", 0, 3, 3, 2, 1, True)]
    assert state.replica_set("t", 0).leader == 3


def test_the_operator_override_without_an_spu_picks_the_live_replica_with_the_longest_log():
    state = new_cluster([1, 2, 3])
    add_topic(state, "t", [[1, 2, 3]], max_lag=0)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    handle(state, ReplicationTick())
    handle(state, SpuOffline(2))
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    handle(state, ReplicationTick())
    handle(state, SpuOffline(3))
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    handle(state, SpuOffline(1))
    handle(state, SpuOnline(2))
    handle(state, SpuOnline(3))
    [elected] = _unclean(handle(state, ElectUncleanLeader("t", 0)))
    assert (elected.spu, elected.new_hw, elected.offsets_lost) == (3, 2, 1)


@pytest.mark.parametrize("spus_back, spu, reason", [
    ((2, 1), 2, "LRS member SPU 1 is live"),
    ((2,), 3, "SPU 3 is not a live replica"),
    ((), None, "no replica is live")])
def test_the_override_is_refused_where_it_does_not_apply(spus_back, spu, reason):
    state = _last_lrs_member_gone()
    for s in spus_back:
        handle(state, SpuOnline(s))
    before = state.replica_set("t", 0).leader
    with pytest.raises(ReplicationError, match=reason):
        handle(state, ElectUncleanLeader("t", 0, spu))
    assert state.replica_set("t", 0).leader == before


def test_the_override_is_refused_for_a_partition_that_has_a_leader():
    state = new_cluster([1, 2])
    add_topic(state, "t", [[1, 2]])
    with pytest.raises(ReplicationError, match="already has leader SPU 1"):
        handle(state, ElectUncleanLeader("t", 0, 2))


def test_the_old_last_member_returning_drops_the_records_the_new_leader_never_had():
    state = _last_lrs_member_gone(unclean=True)
    handle(state, SpuOnline(2))
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    handle(state, SpuOnline(1))
    handle(state, ReplicationTick())
    rs = state.replica_set("t", 0)
    assert rs.replica[1].log == rs.replica[2].log == [0, 1, 3]
    assert rs.lrs == [1, 2] and rs.hw == 3
