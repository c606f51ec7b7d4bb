"""One-way inbound cuts in the pure core: an SPU that is sent nothing but whose own
messages arrive (cluster/core/replication/links.py; ``--one-way --inbound``)."""
from __future__ import annotations

import pytest

from cluster.core.replication import (NETWORK_EXCEPTION, Acks, ProduceRequest,
                                      ReplicationError, ReplicationTick, SpuOffline, add_topic,
                                      cluster_from_dict, cluster_to_dict, handle, links,
                                      netview, new_cluster, produce, run_elections)
from cluster.core.replication.links import CutLinks, HealLinks, SessionExpired


def cluster(replicas=(1, 2, 3), **kw):
    state = new_cluster([1, 2, 3], election_timeout_ms=100)
    add_topic(state, "t", [list(replicas)], **kw)
    return state, state.replica_set("t", 0)


def deaf(state, spu, kind="controller", peers=()):
    handle(state, CutLinks(kind, (spu,), peers, one_way=True, inbound=True, now_ms=0))


def expire_silent(state):
    for spu in [s for s, up in state.spus.items() if up and not links.beats(state, s)]:
        handle(state, SessionExpired(spu))


def test_an_spu_deaf_to_the_controller_keeps_its_session_and_stays_online():
    state, rs = cluster()
    deaf(state, 1)
    assert links.beats(state, 1) and not links.hears_controller(state, 1)
    expire_silent(state)
    assert state.spus[1] and rs.leader == 1 and not rs.deposed


def test_a_leader_deaf_to_the_controller_goes_on_leading_and_its_followers_fetch():
    state, rs = cluster()
    deaf(state, 1)
    result = produce(state, ProduceRequest("t", 0, Acks.ALL, 2))
    handle(state, ReplicationTick(0))
    assert result.accepted and rs.hw == 2 and rs.lrs == [1, 2, 3]


def test_a_follower_deaf_to_the_controller_misses_the_new_epoch_and_fetches_from_nobody():
    state, rs = cluster(max_lag=1)
    deaf(state, 3)
    handle(state, SpuOffline(1))  # the leader crashes: 2 is elected (3 answers no notice)
    run_elections(state, 1000)
    assert rs.leader == 2 and rs.epoch == 2 and rs.unaware == {3: 1}
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 3))
    handle(state, ReplicationTick(10))
    assert rs.replica[3].leo == 0 and rs.lrs == [2] and state.spus[3]


def test_after_the_heal_the_deaf_follower_learns_the_epoch_catches_up_and_rejoins_the_lrs():
    state, rs = cluster(max_lag=1)
    deaf(state, 3)
    handle(state, SpuOffline(1))
    run_elections(state, 1000)
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 3))
    handle(state, ReplicationTick(10))
    handle(state, HealLinks())
    handle(state, ReplicationTick(20))
    # Steady again: its followers as the index keeps them (core.replication.steady).
    assert rs.unaware == {} and state.steady.view(rs).replica[3].leo == 3 and 3 in rs.lrs


def test_a_deaf_spu_is_never_elected():
    state, rs = cluster(replicas=(1, 3, 2))
    deaf(state, 3)
    handle(state, SpuOffline(1))
    run_elections(state, 0)
    run_elections(state, 500)  # 3 was asked first and never answered: its timer fired
    assert rs.leader == 2


def test_inbound_cuts_from_producers_or_an_spu_stop_writes_and_fetches_as_two_way_ones():
    state, rs = cluster(max_lag=0)
    deaf(state, 1, "producers")
    result = produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    assert not result.accepted and result.code == NETWORK_EXCEPTION
    links.heal(state)
    deaf(state, 2, "spu", (1,))  # the leader's answers to 2 are lost: no fetch round
    produce(state, ProduceRequest("t", 0, Acks.LEADER, 1))
    handle(state, ReplicationTick(0))
    assert rs.replica[2].leo == 0 and rs.replica[3].leo == 1


def test_the_matrix_and_the_label_say_which_way_the_cut_drops():
    state, _ = cluster()
    deaf(state, 1)
    handle(state, CutLinks("controller", (2,), one_way=True))
    view = netview.matrix(state)
    at = view["ends"].index("controller")
    assert [r["cells"][at] for r in view["rows"]] == ["in-cut", "out-cut", "ok"]
    assert [c["label"] for c in view["cuts"]] == ["SPU 1 <-/- controller",
                                                  "SPU 2 -/-> controller"]


def test_an_inbound_cut_must_be_one_way():
    state, _ = cluster()
    with pytest.raises(ReplicationError, match="one-way"):
        links.cut_links(state, CutLinks("controller", (1,), inbound=True))
    assert state.cuts == []


def test_inbound_cuts_and_missed_epochs_survive_the_round_trip():
    state, rs = cluster()
    deaf(state, 3)
    handle(state, SpuOffline(1))
    run_elections(state, 1000)
    back = cluster_from_dict(cluster_to_dict(state))
    assert back.cuts == state.cuts and back.cuts[0].inbound
    assert back.replica_set("t", 0).unaware == {3: 1} and not links.hears_controller(back, 3)


def test_the_invariants_catch_a_replica_left_unaware_after_it_hears_the_sc_again():
    from cluster.testing.invariants import InvariantChecker, InvariantViolation
    state, rs = cluster()
    deaf(state, 3)
    handle(state, SpuOffline(1))
    run_elections(state, 1000)
    InvariantChecker().check(state)  # deaf and behind: as the rule says
    state.cuts.clear()
    state._blocked = None  # a heal that forgot to tell it the epoch
    with pytest.raises(InvariantViolation, match="never told epoch 2"):
        InvariantChecker().check(state)
