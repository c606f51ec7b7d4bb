"""The one entry point the shell needs: handle(state, event) -> actions."""
from __future__ import annotations

from typing import Callable

from . import election, leadership, links, reassign
from .events import (Action, CancelReassignment, ElectPreferredLeaders,
                     ElectUncleanLeader, Event, FollowerFetch, ProduceRequest,
                     PromotionFailed, PromotionSucceeded, ReassignPartition,
                     RebalanceLeaders, ReconcileElections, ReplicationTick,
                     SpuOffline, SpuOnline, TimerFired)
from .produce import produce
from .state import ClusterState
from .sync import follower_fetch, replication_step


def _fetch(state: ClusterState, ev: FollowerFetch) -> list[Action]:
    rs = state.replica_set(ev.topic, ev.partition)
    # Moves decide before the fetch, on the state the previous step left.
    actions = reassign.advance_move(state, rs, ev.now_ms)
    return actions + follower_fetch(state, rs, ev.spu, max_records=ev.max_records,
                                    now_ms=ev.now_ms)


def _tick(state: ClusterState, ev: ReplicationTick) -> list[Action]:
    actions = reassign.advance_moves(state, ev.now_ms)
    return actions + replication_step(state, ev.now_ms, ev.max_records)


def _reassign(state: ClusterState, ev: ReassignPartition) -> list[Action]:
    return reassign.start_move(state, ev.topic, ev.partition, ev.target,
                               elect_preferred=ev.elect_preferred,
                               timeout_ms=ev.timeout_ms, now_ms=ev.now_ms)


# Looked up at call time through the module so tests can swap a rule out.
_HANDLERS: dict[type, Callable[[ClusterState, object], list[Action]]] = {
    ProduceRequest: lambda s, e: list(produce(s, e).actions),
    FollowerFetch: _fetch,
    ReplicationTick: _tick,
    SpuOffline: lambda s, e: election.spu_offline(s, e.spu),
    # Whoever brings an SPU back, it learns the epochs: a deposed leader is fenced.
    SpuOnline: lambda s, e: links.spu_back(s, e.spu),
    PromotionSucceeded: lambda s, e: election.promotion_succeeded(s, e),
    PromotionFailed: lambda s, e: election.promotion_failed(s, e),
    TimerFired: lambda s, e: election.timer_fired(s, e),
    ReconcileElections: lambda s, e: election.reconcile_elections(s),
    ReassignPartition: _reassign,
    CancelReassignment: lambda s, e: reassign.cancel_move(s, e.topic, e.partition),
    ElectPreferredLeaders: lambda s, e: list(leadership.elect_preferred_leaders(s, e.topic).actions),
    RebalanceLeaders: lambda s, e: list(leadership.rebalance_leaders(s, e.threshold).actions),
    ElectUncleanLeader: lambda s, e: election.force_unclean(s, e.topic, e.partition, e.spu),
    links.CutLinks: lambda s, e: (links.cut_links(s, e), [])[1],
    links.HealLinks: lambda s, e: links.heal(s, e.cut_id).actions,
    links.SessionExpired: lambda s, e: links.session_expired(s, e.spu, e.running),
}


def handle(state: ClusterState, event: Event) -> list[Action]:
    """Apply one event to the state in place; return what the shell must do."""
    try:
        handler = _HANDLERS[type(event)]
    except KeyError:
        raise TypeError(f"not a replication event: {event!r}") from None
    return handler(state, event)
