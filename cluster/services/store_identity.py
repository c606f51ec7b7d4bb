"""Tie the Redis hot state to the database it mirrors (see hot_state.claim_for_store)."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from cluster import hot_state
from cluster.models import ClusterState


def store_id() -> str:
    return str(ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)[0].store_id)


def ensure_hot_state_is_ours() -> None:
    """Readers call this so they never show another database's leaders and logs."""
    ours = store_id()
    if hot_state.client().get(hot_state.STORE) != ours.encode():
        with hot_state.locked():
            hot_state.claim_for_store(ours)


@contextmanager
def locked_for_this_store(timeout_s: float | None = None) -> Iterator[None]:
    """The hot-state lock, with any state left by another database dropped first."""
    with hot_state.locked(timeout_s):
        hot_state.claim_for_store(store_id())
        yield
