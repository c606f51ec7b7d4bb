"""Unclean leader election (004; Kafka's unclean.leader.election.enable).

The clean rule (see ``election``) keeps a partition Offline until a member of
its LRS returns, because only the LRS is known to hold every committed record.
A topic with ``unclean_leader_election`` on, or an operator's one-off
``ElectUncleanLeader``, trades that for availability: a live replica outside
the LRS leads, the committed offsets it lacks are given up (the HW drops to its
LEO) and an ``UncleanLeaderElected`` action says how many. Every replica's own
HW is clamped to the new HW, so a returning replica cuts what it holds beyond
the new leader's log instead of trusting a prefix that is no longer committed.
"""
from __future__ import annotations

from .state import ReplicaSet, Resolution


def waiting_for(rs: ReplicaSet, spus: dict[int, bool]) -> tuple[int, ...]:
    """The dead LRS members a leaderless set waits for (empty if it can elect cleanly)."""
    if rs.resolution is Resolution.ONLINE or any(spus.get(s) for s in rs.lrs):
        return ()
    return tuple(s for s in rs.lrs if not spus.get(s))


def unclean_candidate(rs: ReplicaSet, spus: dict[int, bool]) -> int | None:
    """The live replica holding the most records (first in replica order on ties)."""
    live = [s for s in rs.replicas if spus.get(s)]
    if not live:
        return None
    return max(live, key=lambda s: rs.replica[s].leo)


def give_up_records(rs: ReplicaSet, spu: int) -> int:
    """Make ``spu``'s log the committed one: HW drops to its LEO; returns the new HW."""
    new_hw = min(rs.hw, rs.replica[spu].leo)
    for r in rs.replica.values():
        r.hw = min(r.hw, new_hw)
    rs.hw = new_hw
    rs.lrs = [spu]
    rs.candidate, rs.tried = None, []
    return new_hw
