"""A unit of work of the replication engine, as a value (issue 32).

    with engine.unit(keys=[("orders", 0)]) as u:   # or shard=2, whole=True, meta=True
        result = core.produce(u.state.state, request)  # u.state: the loaded HotState
        u.actions += result.actions                    # what the core did
        u.stage(values_ops)      # lands in the commit's own fenced write, never before
        u.log(entry)             # a metadata-log entry of this commit
        u.after_commit(fn)       # runs once the commit landed (database rows, say)
    u.committed                  # the frozen record: saved, moved, entries with offsets

Entering takes the store's fenced leases (every one, a shard's, or those of the shards
``keys`` fall in) and loads the sets they guard. The unit holds them as a value
(``u.held``, lease.py's ``Held``) and names them to every write it fences: the commit,
the tickets, the offsets rows (tagged with their token). Leaving the block commits: every election
the state says is due, then the changed sets, the staged writes and the log entries in one
fenced write; then the projections receive ``u.committed`` and the ``after_commit``
callbacks run, still under the leases; then, outside them, the follow-up tick is asked
for and the sets are kept for the next unit. An exception inside the block commits
nothing, and a refused commit (the lease was lost: ``LeaseLost``) leaves the store, the
log and Redis as they were: nothing the block staged, logged or deferred reaches anyone.

It is the one way a unit of work runs: a tick (``whole=True``, or ``shard=`` and the
coordinator's ``meta=True`` sharded), a produce or a leader's query (``keys=``), a resync's
heal, a net cut, a repair. ``u.discard()`` leaves a block without committing (the quiet
tick that finds it needs every set, a repair that finds nothing).

A unit runs with the cyclic GC paused: it builds and drops tens of thousands of small
objects over a heap of every loaded set, and collections meanwhile were a quarter of a busy
tick. What it built is then frozen (cluster/perf.py): the sets the set cache keeps live on
to the next tick, and collections scanning them after every unit were another fifth of it.
Once what was frozen has grown by a quarter, everything is thawed and collected outside the
leases, which reclaims whatever cycles were made meanwhile.

The unit imports nothing of ``engine.py`` nor of the projections that read the engine: it
is handed the engine's collaborators (the store's projection, the other projections, extra
entries, offsets mirror, set cache and scheduler) as ``wiring``.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import ExitStack
from types import TracebackType
from typing import Any, Protocol

from cluster.adapters import hot_state, shards, unloaded
from cluster.adapters.hot_state import HotState, Summary
from cluster.adapters.lease import CLUSTER_LOCK, Held, WriteOp
from cluster.adapters.live_batches import Changed
from cluster.adapters.metadata_log import Entry
from cluster.projections.live import publish_partitions
from cluster.adapters.scheduler import Dispatch, Followups, Scheduler
from cluster.adapters.set_cache import SetCache
from cluster.adapters.summaries import Saved
from cluster.engine.store_identity import locked_for_this_store
from cluster.core import replication as core
from cluster.core.replication import Action, Key
from cluster.engine.entries import changes, step_entries
from cluster.engine.mirror import OffsetsMirror
from cluster.engine.tickets import record_ack_outcomes
from cluster.metrics.hooks import count_step
from cluster.perf import gc_paused, thaw_if_due
from cluster.projections.committed import Committed

Save = Callable[..., list[Key]]
Pick = Callable[[dict[str, Any]], Iterable[Key]]
# Given the unit, its saved sets, its time and whether it writes entries already: more
# entries for the same commit (history's HW checkpoints).
ExtraEntries = Callable[[HotState, Mapping[Key, Summary], int, bool], list[dict[str, Any]]]
# The store's projection: brings its rows up to the log (this commit's entries included) and
# announces the event rows it wrote, as every catch-up does (cluster/projections/store.py);
# given the entries the unit appended, as logged (offset, entry), it need not read them back.
StoreRows = Callable[[Sequence[Entry]], list[Any]]


class Projection(Protocol):
    """A reader's view that follows committed units of work (the network matrix, say):
    ``begin`` notes what it needs before the step, ``committed`` runs once the commit
    landed, with the unit (``hot``, the state it left) and what its commit saved."""

    def begin(self, hot: HotState) -> Any: ...

    def committed(self, hot: HotState, mark: Any, record: Committed) -> None: ...


class Wiring(Protocol):
    """What a unit uses of the engine (cluster/engine/engine.py's ``Engine``)."""

    @property
    def projections(self) -> Mapping[str, Projection]: ...

    @property
    def extra_entries(self) -> Mapping[str, ExtraEntries]: ...

    @property
    def store_rows(self) -> StoreRows: ...

    @property
    def mirror(self) -> OffsetsMirror: ...

    @property
    def sets(self) -> SetCache: ...

    @property
    def scheduler(self) -> Scheduler: ...


def now_ms() -> int:
    return int(time.time() * 1000)


class Unit:
    """One load-modify-commit under the store's fenced leases; see the module's docstring.

    Scopes: ``whole`` (every lease, every set), ``keys`` (those sets: under every lease
    unsharded, under their shards' leases sharded), ``shard`` (one shard's lease and all
    its sets; unsharded, shard 0 is the whole state), ``meta`` (the cluster lease and the
    meta alone: the coordinator's quiet tick), or ``locks`` with ``pick`` (those leases,
    the sets ``pick`` names from the topic table; ``complete``: they are every set the
    leases guard). ``whole`` with ``pick``: every lease, only the sets ``pick`` names (a
    repair loads none and adds those it rebuilds).

    What the commit writes follows from the leases: a holder of every lease saves the
    changed sets and the meta (``hot_state.save``), of some shards' leases their sets only
    (``save_sets``: the meta is the coordinator's), of the cluster lease with no set loaded
    the meta only (``save_meta``; no election runs, no follow-up is asked for, no set is
    kept: any read of a set raises ``unloaded.NeedsWholeState``).

    ``record_ids``: how many records the block may produce, or how to count them from the
    loaded state (sharded, ids come in blocks reserved at the load; a block that produced
    more commits nothing: its ids could collide with another shard's). A holder of every
    lease continues above every id the shards handed out."""

    def __init__(self, wiring: Wiring, *, keys: Iterable[Key] | None = None,
                 shard: int | None = None, whole: bool = False, meta: bool = False,
                 locks: list[str] | None = None, pick: Pick | None = None,
                 complete: bool = False, record_ids: int | Callable[[HotState], int] = 0,
                 dispatch: Dispatch | None = None, lock_timeout_s: float | None = None,
                 now: int | None = None, elections: bool = True) -> None:
        if sum((keys is not None, shard is not None, whole, meta, locks is not None)) != 1:
            raise TypeError("a unit's scope is one of keys=, shard=, whole=True, meta=True "
                            "or locks=")
        if shard is not None and not shards.sharded():
            if shard != 0:
                raise ValueError(f"shard {shard}: the state is one shard (REPLICATION_SHARDS)")
            # The one shard is the whole state, under the lease every other unit takes.
            shard, whole = None, True
        if shard is not None:
            n = shards.count()
            locks, complete = [shards.lock_name(shard)], True
            pick = lambda topics: shards.keys_of_shard(topics, shard, n)  # noqa: E731
        elif keys is not None and shards.sharded():
            wanted = list(keys)
            locks, pick = shards.locks_of(wanted), lambda _: wanted
            # No set, so no shard's lease: its entries go under the cluster lease, as the
            # meta's (a journal's events; with no lease at all its save was refused).
            meta = not wanted
        if meta:
            locks, pick, elections = [CLUSTER_LOCK], _no_set, False
        elif locks is not None and pick is None:
            raise TypeError("locks= needs pick= (which sets of the topic table to load)")
        self._wiring = wiring
        self._keys = None if keys is None else list(keys)
        self._locks, self._pick, self._complete, self._meta = locks, pick, complete, meta
        self._record_ids, self._dispatch = record_ids, dispatch
        self._lock_timeout_s, self._elections = lock_timeout_s, elections
        self.at = now if now is not None else now_ms()
        self.actions: list[Action] = []
        self.committed: Committed | None = None
        self._stack = ExitStack()
        self._hot: HotState | None = None
        self._first_id: int | None = None  # some shards' leases: the reserved block's first
        self._reserved = 0
        self._marks: dict[str, Any] = {}
        self._held: Held | None = None
        self._discarded = False

    @property
    def held(self) -> Held:
        """The leases the unit holds (``Held``): what its own fenced writes name."""
        if self._held is None:
            raise RuntimeError("a unit holds its leases once its block is entered")
        return self._held

    @property
    def state(self) -> HotState:
        """The loaded hot state (its ``state`` the core's ``ClusterState``)."""
        if self._hot is None:
            raise RuntimeError("a unit's state is loaded when its block is entered")
        return self._hot

    def log(self, entry: dict[str, Any]) -> None:
        """A metadata-log entry of this unit's commit (offset order with its other entries)."""
        self.state.log.append(entry)

    def stage(self, ops: Iterable[WriteOp]) -> None:
        """Writes that land in this unit's fenced commit, never before it."""
        self.state.stage(ops)

    def after_commit(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the commit landed (still under the leases), never before."""
        self.state.after_commit(callback)

    def __enter__(self) -> Unit:
        stack = self._stack
        try:
            self._held = stack.enter_context(
                locked_for_this_store(self._lock_timeout_s, locks=self._locks))
            stack.enter_context(gc_paused(freeze=True))
            self._hot = hot = self._load()
            hot.state.clock_ms = self.at
            self._marks = {name: p.begin(hot) for name, p in self._wiring.projections.items()}
        except BaseException:
            stack.close()
            raise
        return self

    def discard(self) -> None:
        """Leaving the block commits nothing: the leases are let go, nothing is written."""
        self._discarded = True

    def _load(self) -> HotState:
        sets, held = self._wiring.sets, self.held
        if self._locks is None:  # every lease: the whole state, the sets of ``keys`` or ``pick``
            hot = (hot_state.load(self._keys, committed=sets, held=held) if self._pick is None
                   else hot_state.load_selected(self._pick, committed=sets, held=held))
            shards.adopt_record_ids(hot.state)
            return hot
        assert self._pick is not None
        hot = hot_state.load_selected(self._pick, committed=sets, complete=self._complete,
                                      held=held)
        if self._meta:
            hot.state.replica_sets = unloaded.UnloadedSets()
            return hot
        count = self._record_ids(hot) if callable(self._record_ids) else self._record_ids
        self._reserved, self._first_id = count, hot.state.next_record_id
        if count:
            self._first_id = hot.state.next_record_id = shards.reserve_record_ids(
                count, self._first_id)
        return hot

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> bool:
        if kind is not None or self._discarded:  # the block failed or let go: no commit
            return bool(self._stack.__exit__(kind, exc, tb))
        with self._stack:
            self._check_record_ids()
            self.committed = _commit(self.state, self.actions, self.at, self._save(),
                                     self._wiring, self.held, elections=self._elections,
                                     marks=self._marks, meta_saved=self._locks is None)
        self.actions = list(self.committed.actions)
        self._outside_the_leases()
        return False

    def _save(self) -> Save:
        """The save the leases allow (see the class's docstring)."""
        if self._meta:
            return hot_state.save_meta
        return hot_state.save if self._locks is None else hot_state.save_sets

    def _check_record_ids(self) -> None:
        if self._first_id is None:
            return
        produced = self.state.state.next_record_id - self._first_id
        if produced > self._reserved:
            # Nothing is saved: ids past the block could collide with another shard's.
            raise RuntimeError(f"a step produced {produced} records with {self._reserved} "
                               f"ids reserved")

    def _outside_the_leases(self) -> None:
        """The follow-up tick, the sets kept for the next unit, a thaw."""
        hot = self.state
        if not self._meta:  # a meta unit loaded no set: no deadline to ask for, none to keep
            followups = Followups(next_deadline_ms=core.next_deadline(hot.state))
            (self._dispatch or self._wiring.scheduler.dispatch)(followups)
            hot_state.keep_committed(hot, self._wiring.sets)
        thaw_if_due()


def _no_set(_: dict[str, Any]) -> Iterable[Key]:
    return ()


def _commit(hot: HotState, actions: list[Action], at: int, save: Save, wiring: Wiring,
            held: Held, *, elections: bool, marks: dict[str, Any],
            meta_saved: bool) -> Committed:
    """A unit's commit: elections, then one save fenced by the leases ``held``, with the
    log entries; then the projections and what the unit deferred. ``marks``: what the
    projections' ``begin`` noted when the unit was loaded; ``meta_saved``: the save writes
    the meta too (a holder of every lease)."""
    actions = list(actions)
    after = hot.after
    if elections:
        actions += core.run_elections(hot.state, at, hot_state.killed())
    # A network rehearsal's accounting; shard units write without the meta, so with
    # shards this ledger never sees their writes.
    core.ledger.account(hot.state, actions, at, complete=not shards.sharded())

    def entries(_saved: list[Key]) -> list[dict[str, Any]]:
        # The save summed up each set it wrote into ``after`` (hot_state); the sets that
        # stayed steady since the last save are not compared for a moved status. The sets
        # it wrote as their figures moved no status and all moved offsets: their summaries
        # are made when read (summaries.Saved).
        hot.moved, hot.differs = changes(hot.before, after, hot.state.steady,
                                            hot.state.replica_sets)
        hot.differs += hot.figured  # last: the reservations read their LEOs apart
        wiring.mirror.reserve(hot, summed)  # the offsets given out, reserved first
        out = step_entries(hot, actions, after, at)
        for hook in wiring.extra_entries.values():
            out += hook(hot, summed, at, bool(out or hot.log))
        return out

    summed = Saved(hot)  # read through ``hot``: what the save leaves in it
    saved = save(hot, held, log=entries)
    record = Committed(at=at, actions=tuple(actions), saved=tuple(saved),
                       moved=tuple(hot.moved), log=tuple(hot.log),
                       first_offset=hot.first_offset, meta_saved=meta_saved)
    _project(hot, actions, summed, wiring.mirror, wiring.store_rows, held, record.entries)
    for name, projection in wiring.projections.items():
        projection.committed(hot, marks.get(name), record)
    later, hot.later = hot.later, []
    for callback in later:
        callback()
    return record


def _project(hot: HotState, actions: list[Action], after: Saved,
            mirror: OffsetsMirror, store_rows: StoreRows, held: Held,
            entries: Sequence[Entry]) -> None:
    """Everything readers see, once the commit landed (the offsets through the engine's
    ``mirror``, the status rows and events through its ``store_rows``, handed the
    ``entries`` the commit appended), written under the leases the unit ``held``."""
    moved = [k for k in hot.moved
             if k in hot.before and hot.before[k].status() != after[k].status()]
    lrs_moved = {k: (hot.before[k].lrs, after[k].lrs) for k in moved
                 if hot.before[k].lrs != after[k].lrs}
    # First: the commit landed in Redis, which is all an acks=all write waits for; the
    # store's rows (under the database's write lock on SQLite) need not delay it.
    record_ack_outcomes(actions, held)
    written = mirror.offsets(hot, after, held)
    store_rows(entries)
    count_step(actions, lrs_moved)
    publish_partitions(Changed(written, after), moved=moved)
