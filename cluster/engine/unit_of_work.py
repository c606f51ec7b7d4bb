"""One unit of work of the replication engine (STYLE.md section 7), as functions taking a
step: thin wrappers over ``Engine.unit`` (cluster/engine/unit.py), kept for the callers
that read best as a step callback (a tick, a resync's heal).

    with the store's fenced leases:
        load the hot state (all of it, some sets, or a shard's)
        apply the step, then every election the state says is due (core.run_elections)
        commit: the changed sets + the staged writes + the metadata-log entries describing
        them, one fenced write
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

from collections.abc import Callable, Iterable
from typing import Any

from cluster.adapters.hot_state import HotState
from cluster.adapters.lease import Held
from cluster.adapters.scheduler import Dispatch
from cluster.core.replication import Action, Key
from cluster.engine.engine import Committed, ExtraEntries, Projection, current
from cluster.engine.unit import Save, commit, now_ms, project

Step = Callable[[HotState], list[Action]]
__all__ = ["Committed", "ExtraEntries", "Projection", "Save", "Step", "now_ms", "project",
           "run_locked", "run_on_shards", "run_unit"]


def run_locked(step: Step, *, keys: Iterable[Key] | None = None,
               dispatch: Dispatch | None = None, lock_timeout_s: float | None = None,
               record_ids: int = 0, now: int | None = None) -> list[Action]:
    """Load (all, or the sets of ``keys``), apply ``step``, commit, project, dispatch.

    ``record_ids``: how many records ``step`` may produce (sharded, ids come in blocks).
    """
    with current().unit(keys=keys, whole=keys is None, record_ids=record_ids,
                        dispatch=dispatch, lock_timeout_s=lock_timeout_s, now=now) as u:
        u.actions += step(u.state)
    return u.actions


def run_on_shards(step: Step, *, locks: list[str],
                  pick: Callable[[dict[str, Any]], Iterable[Key]],
                  record_ids: int | Callable[[HotState], int],
                  dispatch: Dispatch | None, lock_timeout_s: float | None,
                  now: int | None = None, whole_shards: bool = False) -> list[Action]:
    """``run_locked`` under some shards' leases: their sets only, saved without the meta.

    ``record_ids``: how many records ``step`` may produce, or how to count them from the
    loaded sets (a shard's share of the topics' quotas). ``whole_shards``: ``pick`` names
    every set of the shards locked (the set cache may then take them whole)."""
    with current().unit(locks=locks, pick=pick, complete=whole_shards, record_ids=record_ids,
                        dispatch=dispatch, lock_timeout_s=lock_timeout_s, now=now) as u:
        u.actions += step(u.state)
    return u.actions


def run_unit(hot: HotState, step: Step, at: int, save: Save, held: Held, *,
             elections: bool = True) -> Committed:
    """A unit on a state its caller loaded under the leases it ``held`` (the coordinator's
    meta-only tick, a repair): apply, commit with the log entries, then the projections;
    what was committed."""
    hot.state.clock_ms = at
    # The engine's collaborators, read once: a unit runs with the engine it started under.
    engine = current()
    marks = {name: p.begin(hot) for name, p in engine.projections.items()}
    return commit(hot, step(hot), at, save, engine, held, elections=elections, marks=marks)
