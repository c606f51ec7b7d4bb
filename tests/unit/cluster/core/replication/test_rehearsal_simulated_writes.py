"""Issue 35.8: what the rehearsal report counts of the simulated producers' acks=1 writes.

The simulated producers write with ``produce_many`` (acks=1, nobody waits for the answer):
/metrics counts them in records_produced{acks="1"}, the ledger does not count them as
acknowledged, and one a cut truncates is counted in ``unacknowledged_lost``. The shell
tells the ledger how many a leader accepted (``ledger.simulated``), and the report counts
them apart, so that answered plus simulated is what /metrics counted."""
from __future__ import annotations

from cluster.core.replication import (Acks, ProduceRequest, handle, ledger, links, produce,
                                      produce_many)
from cluster.core.replication.links import CutLinks

from .test_network_partitions import cluster, committed, expire_silent


def test_simulated_acks_1_writes_are_not_counted_acknowledged_and_lost_ones_count_as_unacked():
    state, rs = cluster()
    committed(state)
    handle(state, CutLinks("controller", (1,), now_ms=0))
    # Before its session expires SPU 1 still leads: both producers write to it, and no
    # follower fetches these records before the cut deposes it.
    answered = produce(state, ProduceRequest("t", 0, Acks.LEADER, 2))  # a page's write
    ledger.account(state, answered.actions, 5)
    actions, outcomes = produce_many(state, [(("t", 0), 3)], Acks.LEADER)  # the simulation's
    assert outcomes == {None: 3} and rs.leader == 1
    ledger.account(state, actions, 6)
    ledger.simulated(state, Acks.LEADER, outcomes[None])
    ledger.account(state, expire_silent(state), 10)
    assert rs.leader != 1
    ledger.account(state, links.heal(state).actions, 30)
    report = ledger.report(state, 40)
    assert report["acknowledged"]["1"] == 2  # only the answered producer's writes
    assert report["acks1_truncated_count"] == 2
    assert report["unacknowledged_lost"] == 3  # the simulated writes the heal truncated
    assert report["simulated"] == {"0": 0, "1": 3, "all": 0}


def test_simulated_writes_are_counted_only_while_a_rehearsal_runs():
    state, _ = cluster()
    committed(state)
    ledger.simulated(state, Acks.LEADER, 5)  # no cut yet: no rehearsal
    handle(state, CutLinks("controller", (1,), now_ms=0))
    ledger.simulated(state, Acks.LEADER, 2)
    assert ledger.report(state, 1)["simulated"]["1"] == 2
