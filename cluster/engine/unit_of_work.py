"""One unit of work of the replication engine (STYLE.md section 7).

    with the store's fenced leases:
        load the hot state (all of it, some sets, or a shard's)
        apply the step, then every election the state says is due (core.run_elections)
        commit: the changed sets + the metadata-log entries describing them, one fenced write
    then the projections: the store's offsets columns (engine/mirror.py), the store's
    status rows and events (projections/store.py), tick steps' deferred writes, produce
    tickets, live messages, metrics.

A unit of work runs with the cyclic GC paused: it builds and drops tens of thousands
of small objects over a heap of every loaded set, and collections meanwhile were a
quarter of a busy tick. What it built is then frozen (cluster/perf.py): the sets the
set cache keeps live on to the next tick, and collections scanning them after every
unit were another fifth of it. Once what was frozen has grown by a quarter, everything
is thawed and collected outside the leases, which reclaims whatever cycles were made
meanwhile.

Nothing a reader can see is written before the commit lands; a refused commit
(the lease was lost) leaves the store, the log and Redis as they were. What
the step leaves for later is only a time: the earliest election deadline, for
which the dispatcher may ask a tick (a lost request costs one beat, nothing more).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from cluster.adapters import hot_state, metadata_log, shards
from cluster.adapters.hot_state import HotState, Summary
from cluster.adapters.live_batches import publish_partitions
from cluster.adapters.scheduler import Dispatch, Followups
from cluster.adapters.store_identity import locked_for_this_store
from cluster.core import replication as core
from cluster.core.replication import Action, Key
from cluster.engine.engine import Committed, ExtraEntries, Projection, current
from cluster.engine.entries import changes, step_entries
from cluster.engine.mirror import OffsetsMirror
from cluster.engine.tickets import settle_tickets
from cluster.metrics.hooks import count_step
from cluster.projections import store as store_projection
from cluster.projections.announce import announce
from cluster.perf import gc_paused, thaw_if_due

Step = Callable[[HotState], list[Action]]
Save = Callable[..., list[Key]]
__all__ = ["Committed", "ExtraEntries", "Projection", "Save", "Step", "now_ms", "project", "run_locked",
           "run_on_shards", "run_unit"]


def now_ms() -> int:
    return int(time.time() * 1000)


def run_locked(step: Step, *, keys: Iterable[Key] | None = None,
               dispatch: Dispatch | None = None, lock_timeout_s: float | None = None,
               record_ids: int = 0, now: int | None = None) -> list[Action]:
    """Load (all, or the sets of ``keys``), apply ``step``, commit, project, dispatch.

    ``record_ids``: how many records ``step`` may produce (sharded, ids come in blocks).
    """
    if keys is not None and shards.sharded():
        wanted = list(keys)
        return run_on_shards(step, locks=shards.locks_of(wanted), pick=lambda _: wanted,
                             record_ids=record_ids, dispatch=dispatch,
                             lock_timeout_s=lock_timeout_s, now=now)
    at = now if now is not None else now_ms()
    with locked_for_this_store(lock_timeout_s), gc_paused(freeze=True):
        hot = hot_state.load(keys, committed=current().sets)
        shards.adopt_record_ids(hot.state)
        actions = list(run_unit(hot, step, at, hot_state.save).actions)
    _after_commit(hot, actions, dispatch)
    return actions


def run_on_shards(step: Step, *, locks: list[str],
                  pick: Callable[[dict[str, Any]], Iterable[Key]],
                  record_ids: int | Callable[[HotState], int],
                  dispatch: Dispatch | None, lock_timeout_s: float | None,
                  now: int | None = None, whole_shards: bool = False) -> list[Action]:
    """``run_locked`` under some shards' leases: their sets only, saved without the meta.

    ``record_ids``: how many records ``step`` may produce, or how to count them from the
    loaded sets (a shard's share of the topics' quotas). ``whole_shards``: ``pick`` names
    every set of the shards locked (the set cache may then take them whole)."""
    at = now if now is not None else now_ms()
    with locked_for_this_store(lock_timeout_s, locks=locks), gc_paused(freeze=True):
        hot = hot_state.load_selected(pick, committed=current().sets, complete=whole_shards)
        if callable(record_ids):
            record_ids = record_ids(hot)
        first = hot.state.next_record_id
        if record_ids:
            first = hot.state.next_record_id = shards.reserve_record_ids(record_ids, first)

        def bounded(h: HotState) -> list[Action]:
            actions = step(h)
            if h.state.next_record_id > first + record_ids:
                # Nothing is saved: ids past the block could collide with another shard's.
                raise RuntimeError(f"a step produced {h.state.next_record_id - first} records "
                                   f"with {record_ids} ids reserved")
            return actions

        actions = list(run_unit(hot, bounded, at, hot_state.save_sets).actions)
    _after_commit(hot, actions, dispatch)
    return actions


def run_unit(hot: HotState, step: Step, at: int, save: Save, *, elections: bool = True
             ) -> Committed:
    """Apply, commit with the log entries, then run the projections; what was committed."""
    hot.state.clock_ms = at
    after = hot.after
    meta_saved = save is hot_state.save
    # The engine's collaborators, read once: a unit runs with the engine it started under.
    engine = current()
    marks = {name: p.begin(hot) for name, p in engine.projections.items()}
    hot.later = []
    with metadata_log.collecting(hot.log):
        actions = step(hot)
        if elections:
            actions += core.run_elections(hot.state, at, hot_state.killed())
        # A network rehearsal's accounting; shard units write without the meta, so with
        # shards this ledger never sees their writes.
        core.ledger.account(hot.state, actions, at, complete=not shards.sharded())

        def entries(_saved: list[Key]) -> list[dict[str, Any]]:
            # The save summed up each set it wrote into ``after`` (hot_state).
            hot.moved, hot.differs = changes(hot.before, after)
            engine.mirror.reserve(hot, after)  # the offsets given out, reserved first
            out = step_entries(hot, actions, after, at)
            for hook in engine.extra_entries.values():
                out += hook(hot, after, at, bool(out or hot.log))
            return out

        saved = save(hot, log=entries)
    record = Committed(at=at, actions=tuple(actions), saved=tuple(saved),
                       moved=tuple(hot.moved), log=tuple(hot.log),
                       first_offset=hot.first_offset, meta_saved=meta_saved)
    project(hot, actions, after, engine.mirror)
    for name, projection in engine.projections.items():
        projection.committed(hot, marks[name], record)
    later, hot.later = hot.later, []
    for callback in later:
        callback()
    return record


def project(hot: HotState, actions: list[Action], after: dict[Key, Summary],
            mirror: OffsetsMirror) -> None:
    """Everything readers see, once the commit landed (the offsets through the engine's
    ``mirror``)."""
    moved = [k for k in hot.moved
             if k in hot.before and hot.before[k].status() != after[k].status()]
    lrs_moved = {k: (hot.before[k].lrs, after[k].lrs) for k in moved
                 if hot.before[k].lrs != after[k].lrs}
    # First: the commit landed in Redis, which is all an acks=all write waits for; the
    # store's rows (under the database's write lock on SQLite) need not delay it.
    settle_tickets(actions)
    written = mirror.offsets(hot, after)
    events = store_projection.catch_up()
    count_step(actions, lrs_moved)
    announce(events)
    publish_partitions(written, moved=moved)


def _after_commit(hot: HotState, actions: list[Action], dispatch: Dispatch | None) -> None:
    """Outside the leases: the follow-up tick, the sets kept for the next unit, a thaw."""
    deadline = core.next_deadline(hot.state)
    followups = Followups(next_deadline_ms=deadline)
    (dispatch or current().scheduler.dispatch)(followups)
    hot_state.keep_committed(hot, current().sets)
    thaw_if_due()
