"""Tie the Redis hot state to the database it mirrors: its keys carry the store id.

A database made anew gets a new store id, hence an empty namespace: it never
inherits another database's leaders and logs, and never deletes them either
(two installations may share one Redis database).
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from cluster.adapters import hot_state
from cluster.adapters.lease import Lease
from cluster.adapters.redis_keys import bound_to_store
from cluster.models import ClusterState


def store_id() -> str:
    return str(ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)[0].store_id)


def ensure_hot_state_is_ours() -> None:
    """Readers call this: it names the namespace (``repl:{<store id>}:store``) once."""
    hot_state.claim_for_store(store_id())


@contextmanager
def locked_for_this_store(timeout_s: float | None = None) -> Iterator[Lease]:
    """The store's fenced lease, with its namespace resolved once for the use case."""
    ours = store_id()
    with bound_to_store(ours), hot_state.locked(timeout_s) as held:
        hot_state.claim_for_store(ours)
        yield held
