"""Tie the Redis hot state to the database it mirrors: its keys carry the store id.

A database made anew gets a new store id, hence an empty namespace: it never
inherits another database's leaders and logs, and never deletes them either
(two installations may share one Redis database).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from django.conf import settings

from cluster.adapters import hot_state, lease, shards
from cluster.adapters.lease import Lease
from cluster.adapters.redis_keys import bound_to_store
from cluster.models import ClusterState


def store_id() -> str:
    return str(ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)[0].store_id)


def ensure_hot_state_is_ours() -> None:
    """Readers call this: it names the namespace (``repl:{<store id>}:store``) once."""
    hot_state.claim_for_store(store_id())


@contextmanager
def locked_for_this_store(timeout_s: float | None = None, *,
                          locks: Sequence[str] | None = None) -> Iterator[Lease]:
    """The store's fenced leases (``locks``, or by default every one: the whole state),
    with its namespace resolved once for the use case."""
    ours = store_id()
    wait_s = timeout_s or settings.REPLICATION_LOCK_TIMEOUT_S
    names = shards.every_lock() if locks is None else locks
    with bound_to_store(ours), lease.held_all(wait_s, names) as held:
        hot_state.claim_for_store(ours)
        yield held[0]
