"""Which messages get through the network cuts in force (rules: ``links``)."""
from __future__ import annotations

from .state import ClusterState, Cut

CONTROLLER = "controller"
PRODUCERS = "producers"
Node = int | str


def _ends(cut: Cut) -> tuple[tuple[Node, ...], tuple[Node, ...]]:
    if cut.kind == "spu":
        return cut.spus, cut.peers
    if cut.kind == "racks":
        # The SC sits with the racks not named: the named side loses its sessions.
        return cut.spus, (*cut.peers, CONTROLLER)
    return cut.spus, (cut.kind,)


def blocked_pairs(state: ClusterState) -> frozenset[tuple[Node, Node]]:
    """Every (from, to) pair whose messages are dropped, cached until the cuts change."""
    if state._blocked is None:
        pairs: set[tuple[Node, Node]] = set()
        for cut in state.cuts:
            side, other = _ends(cut)
            if not (cut.one_way and cut.inbound):
                pairs.update((a, b) for a in side for b in other)
            if not cut.one_way or cut.inbound:
                pairs.update((b, a) for a in side for b in other)
        state._blocked = frozenset(pairs)
    return state._blocked


def blocked(state: ClusterState, src: Node, dst: Node) -> bool:
    return bool(state.cuts) and (src, dst) in blocked_pairs(state)


def beats(state: ClusterState, spu: int) -> bool:
    """Its heartbeats reach the SC (the session rule; the shell's connection manager)."""
    return not blocked(state, spu, CONTROLLER)


def hears_controller(state: ClusterState, spu: int) -> bool:
    return not blocked(state, CONTROLLER, spu)


def silenced(state: ClusterState) -> set[int]:
    """SPUs that cannot both hear the SC and answer it: no notice is answered."""
    if not state.cuts:
        return set()
    return {s for s in state.spus if not (beats(state, s) and hears_controller(state, s))}


def fetch_cut(state: ClusterState) -> frozenset[tuple[Node, Node]]:
    """(follower, leader) pairs that cannot fetch: a fetch round needs both directions."""
    pairs = blocked_pairs(state) if state.cuts else frozenset()
    spu_pairs = [(a, b) for a, b in pairs if isinstance(a, int) and isinstance(b, int)]
    return frozenset(spu_pairs + [(b, a) for a, b in spu_pairs])


def producers_reach(state: ClusterState, spu: int) -> bool:
    return not (blocked(state, PRODUCERS, spu) or blocked(state, spu, PRODUCERS))
