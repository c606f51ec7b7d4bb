"""An SPU changing status can be adopted on its sets alone (engine/controllers.adopt_alone).

The sharded engine adopts an SPU going offline or coming back, or found silent by the
connection manager, under every lease with only the sets that have a replica on it
loaded, where it used to load every set. That is sound
only if the core's reaction reaches no other set and reads nothing of them. Over the
fault schedules (cuts, moves, crashes, compaction, elections in flight), after every
step, each SPU's change is applied twice to copies of the state: to the whole state, and
to a state holding only that SPU's sets (as the unit loads them). The actions, the meta
and every one of those sets must be the same, the other sets untouched; then the
elections the unit's commit runs, on both, must leave those sets the same too.
"""
from __future__ import annotations

import os

from cluster.core.replication import (SpuOffline, SpuOnline, cluster_from_dict,
                                      cluster_to_dict, handle, run_elections)
from cluster.core.replication.links import SessionExpired
from cluster.testing import faults

SEEDS = int(os.environ.get("ALONE_SCHEDULES", "100"))


def _copy(state, keys=None):
    d = cluster_to_dict(state)
    if keys is not None:
        d["replica_sets"] = [s for s in d["replica_sets"] if (s["topic"], s["partition"]) in keys]
    copy = cluster_from_dict(d)
    copy.clock_ms = state.clock_ms
    return copy


def _sets(state) -> dict:
    return {(d["topic"], d["partition"]): d for d in cluster_to_dict(state)["replica_sets"]}


def _meta(state) -> dict:
    return {k: v for k, v in cluster_to_dict(state).items() if k != "replica_sets"}


def _changes(state) -> list:
    """Every SPU change that applies now: an online SPU offline, or silent (the connection
    manager: its session expired, its loop stopped or still running behind a cut), an
    offline one back (not one whose session a cut broke: it comes back when the cut
    heals)."""
    out: list = []
    for s, up in sorted(state.spus.items()):
        if up:
            out += [SpuOffline(s), SessionExpired(s, running=True),
                    SessionExpired(s, running=False)]
        elif s not in state.expired:
            out.append(SpuOnline(s))
    return out


def _compare(seed: int, where: str, state, now: int) -> int:
    compared = 0
    for event in _changes(state):
        whole = _copy(state)
        holding = {k for k, rs in whole.replica_sets.items() if event.spu in rs.replicas}
        alone = _copy(state, holding)
        before = _sets(whole)
        said = f"seed={seed} {where} {event}"
        assert handle(alone, event) == handle(whole, event), said
        assert _meta(alone) == _meta(whole), said
        after, theirs = _sets(whole), _sets(alone)
        assert theirs == {k: after[k] for k in holding}, said
        assert {k: v for k, v in after.items() if k not in holding} == {
            k: v for k, v in before.items() if k not in holding}, said
        elected = run_elections(whole, now, ()), run_elections(alone, now, ())
        after, theirs = _sets(whole), _sets(alone)
        assert theirs == {k: after[k] for k in holding}, f"{said}, elections {elected}"
        compared += len(holding)
    return compared


def test_an_spu_change_on_its_sets_alone_leaves_them_as_on_the_whole_state():
    compared = changes = 0
    for seed in range(SEEDS):
        run = faults._Run(seed, None)
        for i in range(run.rng.randint(30, 80)):
            run.step()
            run.elections_pass()
            if i % 3 == 0:
                changes += len(_changes(run.state))
                compared += _compare(seed, f"step {i}", run.state, run.now + 100)
    # Changes were tried, and sets compared (a schedule of SPUs with no set proves nothing).
    assert changes > SEEDS * 10
    assert compared > SEEDS * 20
