"""The one entry point the shell needs: handle(state, event) -> actions."""
from __future__ import annotations

from typing import Callable

from . import election
from .events import (Action, Event, FollowerFetch, ProduceRequest,
                     PromotionFailed, PromotionSucceeded, ReconcileElections,
                     ReplicationTick, SpuOffline, SpuOnline, TimerFired)
from .produce import produce
from .state import ClusterState
from .sync import follower_fetch, replication_step


def _fetch(state: ClusterState, ev: FollowerFetch) -> list[Action]:
    rs = state.replica_set(ev.topic, ev.partition)
    return follower_fetch(state, rs, ev.spu, max_records=ev.max_records, now_ms=ev.now_ms)


# Looked up at call time through the module so tests can swap a rule out.
_HANDLERS: dict[type, Callable[[ClusterState, object], list[Action]]] = {
    ProduceRequest: lambda s, e: list(produce(s, e).actions),
    FollowerFetch: _fetch,
    ReplicationTick: lambda s, e: replication_step(s, e.now_ms, e.max_records),
    SpuOffline: lambda s, e: election.spu_offline(s, e.spu),
    SpuOnline: lambda s, e: election.spu_online(s, e.spu),
    PromotionSucceeded: lambda s, e: election.promotion_succeeded(s, e),
    PromotionFailed: lambda s, e: election.promotion_failed(s, e),
    TimerFired: lambda s, e: election.timer_fired(s, e),
    ReconcileElections: lambda s, e: election.reconcile_elections(s),
}


def handle(state: ClusterState, event: Event) -> list[Action]:
    """Apply one event to the state in place; return what the shell must do."""
    try:
        handler = _HANDLERS[type(event)]
    except KeyError:
        raise TypeError(f"not a replication event: {event!r}") from None
    return handler(state, event)
