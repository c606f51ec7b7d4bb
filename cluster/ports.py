"""The engine's one public surface: what the other apps (planner, healing, history) use.

DESIGN.md "The engine as one object": other apps use ``cluster/ports.py`` only, never
cluster's adapters or engine (tests/unit/webapp/test_app_layering.py holds the rule). This
is a facade, not a second implementation: each function calls the module that owns the
behaviour through its attribute (``metadata_log.head()``, not a copied reference), so a
test that patches ``cluster.adapters.<module>.<name>`` is seen through the port too.

What it offers, by subject:

* the engine: the one object the composition root (composition/bootstrap.py) built, with its
  collaborators (``engine``);
* the metadata log: its head and start, reading entries, which stream it is;
* the store: its namespace, binding it for a use case, the offset its rows have applied
  and catching them up to the log;
* units of work: the loaded state's type (a tick step defers a write with
  ``hot.after_commit``), whether a unit loaded sets, a replica set's summary, a unit of
  work (``with ports.unit(...) as u:``), the types of a tick step and of extra entries;
* live pages: the next sequence number of a live group.
"""
from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from cluster.adapters import hot_state, live_seqs, metadata_log, redis_keys, unloaded
from cluster.adapters.hot_state import HotState
from cluster.adapters.metadata_log import Entry as LogEntry
from cluster.adapters.set_codec import Summary
from cluster.core.replication import ReplicaSet
from cluster.engine import engine as engine_module
from cluster.engine.engine import Engine, ExtraEntries, TickStep
from cluster.engine.store_identity import ensure_hot_state_is_ours
from cluster.engine.unit import Unit
from cluster.projections import intents as intent_rows
from cluster.projections import store as store_projection

if TYPE_CHECKING:
    from cluster.models import Event

__all__ = [
    "Engine", "ExtraEntries", "HotState", "LogEntry", "Summary", "TickStep", "Unit",
    "append_entries", "applied_offset", "bound_to_store", "catch_up_store", "engine",
    "hold_store_log", "log_head", "log_start", "log_stream_key", "next_live_seq",
    "partition_rows_moved", "read_log", "read_log_from", "sets_loaded", "store_namespace",
    "summary", "unit", "view_summary",
]


# --- The engine ---------------------------------------------------------------------

def engine() -> Engine:
    """The process's engine, as the composition root built it."""
    return engine_module.current()


# --- The metadata log ---------------------------------------------------------------

def append_entries(entries: list[dict[str, Any]]) -> list[int]:
    """Append entries that are no engine state (a detection run's ``event`` entries) to the
    metadata log now, under no lease, above what the store applied, as an operator's
    intent is; then bring the store's projection up to them (their event rows). Their
    offsets. Through a unit of work they waited for the engine's lease: a whole tick at
    120,000 partitions held a worker 7-10 s that had only events to log."""
    if not entries:
        return []
    at = int(time.time() * 1000)
    stamped = [e if "at" in e else {**e, "at": at} for e in entries]
    with engine_module.current().bound():  # the store's id read once, for both
        ensure_hot_state_is_ours()
        offsets = metadata_log.append_now(stamped, floor=store_projection.applied_offset())
        store_projection.catch_up(known=[LogEntry(o, e) for o, e in zip(offsets, stamped)])
    return offsets


def log_head() -> int:
    """The offset of the newest entry (0 for an empty log)."""
    return metadata_log.head()


def log_start() -> int:
    """The first offset the log still holds (head + 1 when it holds nothing)."""
    return metadata_log.start()


def log_stream_key() -> str:
    """The Redis key of this store's log: tells one log from another (a new store)."""
    return metadata_log.stream_key()


def read_log(first: int, limit: int = 1000) -> list[LogEntry]:
    """Up to ``limit`` entries from offset ``first`` on, in offset order."""
    return metadata_log.read(first, limit)


def read_log_from(first: int = 0, batch: int = 5000) -> Iterator[LogEntry]:
    """Every entry from offset ``first`` on, read ``batch`` at a time."""
    return metadata_log.read_all(first, batch)


# --- The store ----------------------------------------------------------------------

def store_namespace() -> str:
    """The id of the store this process serves: the namespace of its Redis keys (the use
    case's bound one, else read from the engine's ``store_id``)."""
    return engine().namespace()


@contextmanager
def bound_to_store(store_id: str | None = None) -> Iterator[str]:
    """Resolve the store's namespace once for a use case (nested binds keep the outer)."""
    with redis_keys.bound_to_store(store_id or engine().store_id) as namespace:
        yield namespace


def applied_offset() -> int:
    """The log offset the store's rows have applied."""
    return store_projection.applied_offset()


def partition_rows_moved(first: int, last: int) -> set[tuple[int, int]] | None:
    """The (topic pk, index) of the partition rows whose status the log entries ``first``
    to ``last`` wrote; None if they may have written others (projections/store.py)."""
    return store_projection.partition_rows_moved(first, last)


def catch_up_store() -> list[Event]:
    """Apply to the store's rows what they have not applied yet; the events written."""
    return store_projection.catch_up()


def hold_store_log() -> None:
    """Hold, for the rest of the caller's transaction, the lock every catch-up of the store
    takes first: an intent the caller appends while holding it (``record_intent``, inside)
    is applied by the caller's own catch-up, after what it read and wrote before it."""
    intent_rows.hold()


# --- Units of work and the tick -----------------------------------------------------

def summary(replica_set: ReplicaSet) -> Summary:
    """What the store mirrors of a replica set (leader, LRS, offsets)."""
    return hot_state.summary(replica_set)


def view_summary(hot: HotState, replica_set: ReplicaSet) -> Summary:
    """A loaded set's summary as it stands whole (a steady one's followers as its index
    keeps them), without copying the set."""
    return hot_state.view_summary(hot.state.steady, replica_set)


def sets_loaded(hot: HotState) -> bool:
    """Whether the unit loaded replica sets: the coordinator's quiet tick loads none (any
    read of its sets asks for the whole state, ``unloaded.NeedsWholeState``)."""
    return not isinstance(hot.state.replica_sets, unloaded.UnloadedSets)


def unit(**scope: Any) -> Unit:
    """A unit of work of the process's engine (cluster/engine/unit.py), with the scopes and
    options of ``Engine.unit``: ``with ports.unit(keys=[]) as u: u.log(entry)``."""
    return engine_module.current().unit(**scope)


# --- Live pages ---------------------------------------------------------------------

def next_live_seq(group: str) -> int:
    """Step and return a live group's sequence (cluster/live.py's protocol)."""
    return live_seqs.next_seq(group)
