"""Replication use cases: the tick, its sharded parts, and the store's periodic resync.

Each is one unit of work of the engine (cluster/engine/unit.py): load
under the store's fenced leases, apply the core, commit the changed sets with
the metadata-log entries that describe them, then project (store rows, events,
live messages, metrics). Elections need no follow-up message: their notices
and timers are state that every unit of work acts on (core.run_elections).

A tick runs every live SPU loop at once: they share replica sets and the lock,
so one load per tick beats one per SPU. A stopped ("killed") loop neither
fetches nor serves nor refreshes its heartbeat; the connection manager marks
its SPU offline once the heartbeat is older than the timeout (003).

With ``REPLICATION_SHARDS`` > 1 a tick is a coordinator (``replication_coordinate``:
cluster-wide work under the cluster lease) and one task per shard
(``replication_shard_tick``: the SPU loops, producers and elections of that
shard's partitions under its lease); cluster/adapters/shards.py says who
locks what. With one shard everything runs as one tick.
"""
from __future__ import annotations

import time
from functools import partial
from typing import Any, NamedTuple

from django.conf import settings

from cluster.adapters import hot_state, metadata_log, shards, unloaded
from cluster.adapters.hot_state import HotState
from cluster.adapters.redis_keys import client, key
from cluster.adapters.scheduler import Dispatch
from cluster.core import replication as core
from cluster.core.replication import Action, Key, metadata
from cluster.engine.engine import current as engine
from cluster.engine.unit import Unit, now_ms
from cluster.engine.mirror import trails_by_design
from cluster.engine.mirror_rows import stored_shape, write_offsets
from cluster.engine.controllers import Found, Topology, adopt_alone, adopt_topology, topology_quiet
from cluster.engine.spu_loops import connection_manager
from cluster.engine.spu_loops import (run_spu_loops,  # noqa: F401 (re-exported)
                                     sync_topology)
from cluster.metrics.counters import timed_shard_tick, timed_tick
from cluster.models import Partition
from cluster.projections import store as store_projection
from cluster.selectors.sql import tuple_parser, with_texts
from cluster.services.recovery import checked_without_sets, hot_state_check_against_store
from cluster.services.simulated_producers import (TopicQuota, produce_quotas,
                                                  producer_quotas, records_due,
                                                  simulate_producers)

CONTROLLER = "partition-controller"


def replication_tick(*, now: int | None = None, dispatch: Dispatch | None = None,
                     lock_timeout_s: float | None = None) -> dict[str, int]:
    """Adopt the operator intents logged since the last tick (the SPU and topic
    controllers: engine/controllers.py), check the hot state against the log,
    run every live SPU loop, let the connection manager drop silent SPUs, run the
    simulated producers and the installed tick steps (a running plan)."""
    at = now if now is not None else now_ms()
    tick_steps = engine().tick_steps
    # The store's id read once, for the unit and the tick's counters after it.
    with engine().bound(), timed_tick(), engine().unit(
            whole=True, dispatch=dispatch, lock_timeout_s=lock_timeout_s, now=at) as u:
        hot, stopped = u.state, hot_state.killed()
        actions = adopt_topology(hot, at)
        hot_state_check_against_store(hot)
        actions += run_spu_loops(hot, at, stopped)
        if settings.REPLICATION_SIMULATED_PRODUCERS:
            actions += simulate_producers(hot, at, stopped)
        for extra in tick_steps:
            actions += extra(hot, at)
        u.actions += actions
        report = {"sets": len(hot.state.replica_sets), "actions": len(actions)}
    return report


def replication_coordinate(*, now: int | None = None, dispatch: Dispatch | None = None,
                           lock_timeout_s: float | None = None
                           ) -> dict[int, dict[str, TopicQuota]] | None:
    """The cluster-wide part of a sharded tick; returns each shard's producer quotas
    (the topics' quotas, the same for every shard: each appends its partitions' share),
    or None when it adopted a change of the sets itself (``coordinate``)."""
    return coordinate(now=now, dispatch=dispatch, lock_timeout_s=lock_timeout_s).quotas


class Coordinated(NamedTuple):
    """What a coordinator's tick ran: QUIET (the shards' ``quotas`` returned, their tasks to
    follow), ALONE (the changing SPUs' sets and the topics added or dropped, under every
    lease) or WHOLE (the whole tick); ``step_sets``, how many sets the tick steps (a running
    plan's) read in a unit of their own before it (0: none, or the whole tick ran them)."""
    ran: Topology
    quotas: dict[int, dict[str, TopicQuota]] | None
    step_sets: int = 0


@timed_tick()
def coordinate(*, now: int | None = None, dispatch: Dispatch | None = None,
               lock_timeout_s: float | None = None) -> Coordinated:
    """``replication_coordinate``, saying what the tick ran (``Coordinated``).

    A quiet tick holds only the cluster lease and loads no replica set: it beats
    the live SPUs, applies topic settings, runs the tick steps and accounts the simulated
    producers. A tick step that reads replica sets (a running plan's) names them
    (``unloaded.NeedsSets``): it runs under every lease with only those sets loaded
    (``_steps_alone``), then the quiet tick runs without it. SPUs registered, forgotten,
    changing status or found silent, and topics added or dropped, are adopted under every
    lease with only the changing SPUs' sets loaded (``_alone``); a topic deleted and made
    again, by two of those. When something else cluster-wide must change replica sets (a
    tick step that goes over every set, a Redis restart to check against the log) it runs
    the whole tick instead, under every lease. Either way no shard task is needed that tick.
    """
    at = now if now is not None else now_ms()
    found, quotas = _quiet(at, lock_timeout_s, steps=True)
    step_sets = 0
    if found.sets:
        ran = _steps_alone(at, found.sets, dispatch, lock_timeout_s)
        if ran is None:
            found = Found(Topology.WHOLE)
        else:  # the steps ran: the quiet tick's own work, without them
            step_sets = ran
            found, quotas = _quiet(at, lock_timeout_s, steps=False)
    if found.topology is Topology.ALONE and _alone(at, found, dispatch, lock_timeout_s):
        return Coordinated(Topology.ALONE, None, step_sets)
    if found.topology is not Topology.QUIET:
        replication_tick(now=now, dispatch=dispatch, lock_timeout_s=lock_timeout_s)
        return Coordinated(Topology.WHOLE, None, step_sets)
    return Coordinated(Topology.QUIET, {shard: quotas for shard in range(shards.count())},
                       step_sets)


def _quiet(at: int, lock_timeout_s: float | None, *, steps: bool
           ) -> tuple[Found, dict[str, TopicQuota]]:
    """The quiet tick under the cluster lease (``_quiet_tick``), committed only when it
    found nothing more to do; with it, the topics' producer quotas."""
    quotas: dict[str, TopicQuota] = {}
    with engine().unit(meta=True, lock_timeout_s=lock_timeout_s, now=at) as u:
        found, quiet = _quiet_tick(u.state, at, steps=steps)
        if found.topology is not Topology.QUIET or found.sets:
            u.discard()  # nothing of the quiet tick is committed: the sets' unit runs
        else:
            u.actions += quiet
            if settings.REPLICATION_SIMULATED_PRODUCERS:
                quotas.update(producer_quotas(u.state, at))
    return found, quotas


# A tick step that reaches for sets its unit did not load runs again with them loaded; one
# that keeps reaching for more than it named this many times takes the whole tick.
STEP_ATTEMPTS = 3


def _steps_alone(at: int, named: frozenset[Key], dispatch: Dispatch | None,
                 lock_timeout_s: float | None) -> int | None:
    """The tick steps under every lease with only the sets they read loaded (those they
    ``named``, then any more they reach for); how many sets that was, or None, committing
    nothing, when they go over every set or keep reaching for more (``STEP_ATTEMPTS``)."""
    wanted = set(named)
    for _ in range(STEP_ATTEMPTS):
        with engine().unit(whole=True, pick=lambda topics: [k for k in wanted if k[0] in topics],
                           dispatch=dispatch, lock_timeout_s=lock_timeout_s, now=at) as u:
            hot, actions = u.state, []
            try:
                with unloaded.picked(hot.state, hot.holds):
                    for extra in engine().tick_steps:
                        actions += extra(hot, at)
            except unloaded.NeedsSets as more:
                u.discard()
                wanted |= more.keys
                continue
            except unloaded.NeedsWholeState:
                u.discard()
                return None
            u.actions += actions
            return len(hot.state.replica_sets)
    return None


def _alone(at: int, found: Found, dispatch: Dispatch | None,
           lock_timeout_s: float | None) -> bool:
    """SPUs registered, forgotten or changing status and topics added or dropped
    (controllers.adopt_alone), then the connection manager for the SPUs found silent, under
    every lease with only the sets holding a replica on one of those SPUs loaded (found from
    each shard's index, else from their stored statuses: ``hot_state.keys_holding``);
    False, committing nothing, when the intents ask more by then."""
    spus = found.spus | found.silent
    with engine().unit(whole=True, pick=lambda topics: hot_state.keys_holding(topics, spus),
                       dispatch=dispatch,
                       lock_timeout_s=lock_timeout_s, now=at) as u:
        actions = adopt_alone(u.state, at, spus)
        if actions is None:
            u.discard()
            return False
        if found.silent:
            actions += connection_manager(u.state, at, hot_state.killed(), only=found.silent)
        u.actions += actions
    return True


def _quiet_tick(hot: HotState, at: int, *, steps: bool = True
                ) -> tuple[Found, list[Action]]:
    """Cluster-wide work that needs no replica set (QUIET, with its actions), or what the
    tick needs instead (QUIET with ``sets``: the tick steps read those; ``steps`` False:
    they ran already)."""
    if not checked_without_sets(hot):  # a new Redis run that the whole state must check
        return Found(Topology.WHOLE), []
    found = topology_quiet(hot, at)
    if found.topology is not Topology.QUIET:
        return found, []
    stopped = hot_state.killed()
    live = [s for s, up in hot.state.spus.items()
            if up and s not in stopped and core.links.beats(hot.state, s)]
    hot_state.beat(live, at)
    beats, timeout_ms = hot_state.heartbeats(), settings.REPLICATION_HEARTBEAT_TIMEOUT_S * 1000
    silent = frozenset(s for s, up in hot.state.spus.items()
                       if up and at - beats.get(s, at) > timeout_ms)
    if silent:  # the connection manager drops an SPU: its sets change, and no other
        return Found(Topology.ALONE, silent=silent), []
    hot_state.beat([s for s, up in hot.state.spus.items() if up and s not in beats], at)
    actions: list[Action] = []
    try:
        for extra in engine().tick_steps if steps else ():
            actions += extra(hot, at)
    except unloaded.NeedsSets as reached:
        return Found(Topology.QUIET, sets=reached.keys), []
    except unloaded.NeedsWholeState:
        return Found(Topology.WHOLE), []
    return found, actions


def replication_shard_tick(shard: int, *, quotas: dict[str, TopicQuota] | None = None,
                           now: int | None = None, dispatch: Dispatch | None = None,
                           lock_timeout_s: float | None = None) -> dict[str, int]:
    """One shard's part of a tick: its live SPU loops, its producers' records, elections."""
    due = dict(quotas or {})
    at = now if now is not None else now_ms()
    report: dict[str, int] = {"shard": shard}
    started, cpu = time.perf_counter(), time.process_time()
    with engine().bound(), timed_shard_tick(), engine().unit(
            shard=shard, dispatch=dispatch, lock_timeout_s=lock_timeout_s, now=at,
            record_ids=lambda hot: records_due(due, hot.state.replica_sets)) as u:
        hot, stopped = u.state, hot_state.killed()
        state = hot.state
        actions = core.advance_moves(state, at)
        actions += _fetch_round(state, at, stopped)
        actions += produce_quotas(hot, due, stopped)
        u.actions += actions
        report.update(sets=len(state.replica_sets), actions=len(actions))
    # Wall and CPU time apart: on a shared machine the gap is time spent waiting for a core.
    report["ms"] = int((time.perf_counter() - started) * 1000)
    report["cpu_ms"] = int((time.process_time() - cpu) * 1000)
    return report


def followers_fetch(hot: HotState, keys: list[Key], at: int) -> list[Action]:
    """The core's fetch round (``replication_step``) for these loaded sets only.

    A follower's fetch waits at its leader for new records (Kafka's
    ``replica.fetch.wait.max.ms``), so a write is fetched as soon as it lands: a
    unit of work holding a few sets (an acks=all produce) runs that round itself
    instead of leaving it to the next tick of the whole shard. It is the tick's own
    round: stopped loops neither fetch nor serve, cut or offline followers do not
    fetch, and the HW moves only as the LRS's LEOs allow, so nothing is acknowledged
    the core has not committed.
    """
    return _fetch_round(hot.state, at, hot_state.killed(), keys)


def _fetch_round(state: core.ClusterState, at: int, stopped: set[int],
                 keys: list[Key] | None = None) -> list[Action]:
    """The core's fetch round (of ``keys`` only, or every set): the stopped loops of
    registered SPUs neither fetch nor serve."""
    max_records = settings.REPLICATION_MAX_RECORDS_PER_FETCH or None
    return core.replication_step(state, at, max_records,
                                 stopped={s for s in stopped if state.spus.get(s)}, keys=keys)


def replication_resync_store(*, heal: bool = True) -> int:
    """Apply log entries the store missed, and heal rows that drifted from the hot state;
    returns how many rows drifted.

    A process that dies between its commit and its projections leaves the store
    behind until the next unit of work or this periodic reconciliation heals it.
    A row changed behind the engine's back is healed the way every row is
    written: its status by a ``partition`` entry in the log, its offsets by the
    offsets mirror. Sharded, it takes one shard at a time, so the ticks of the
    others go on. ``heal`` False: only the log's catch-up and trim (the beat heals at
    most every ``REPLICATION_RESYNC_INTERVAL_S``, ``resync_heal_due``: the heal reads
    every row and every set, 30 s of a loaded machine at 100,000 partitions). Rows whose
    offsets only trail the hot state are the mirror's to bring level (``_trails``).
    """
    with engine().bound():  # the store's id read once, for the catch-up and the trim
        store_projection.catch_up()
        metadata_log.trim(store_projection.applied_offset(), floor=engine().floor())
    if not heal:
        return 0
    n = shards.count() if shards.sharded() else 1
    # Rows read before a shard's lease may be a tick old: a row then healed needlessly
    # still gets the hot state's current values, written under that shard's lease.
    stored = _stored_rows()
    drifted = 0
    for shard in range(n):  # unsharded, shard 0 is the whole state
        with engine().unit(shard=shard, dispatch=_nowhere) as u:
            rows = _heal_rows(u, stored)
            # The offsets once the entries landed, tagged with the unit's fencing token.
            u.after_commit(partial(write_offsets, rows, u.held.token))
        drifted += len(rows)
    return drifted


def _stored_rows() -> dict[int, tuple[Any, ...]]:
    """Every partition row's status and offsets, by id, shaped as ``_stored_shape``."""
    parse = tuple_parser()
    return {pk: (parse(replicas), leader, parse(lrs), resolution, epoch, preferred, hw, leo)
            for pk, replicas, leader, lrs, resolution, epoch, preferred, hw, leo in
            with_texts(Partition.objects.all(), "replicas", "lrs").values_list(
                "id", "replicas_text", "leader", "lrs_text", "resolution", "epoch",
                "initial_leader", "hw", "leo").iterator(chunk_size=5000)}


def _heal_rows(u: Unit, stored: dict[int, tuple[Any, ...]]
               ) -> list[tuple[int, Key, hot_state.Summary]]:
    """The rows of the unit's sets that drifted from the hot state (their offsets to write);
    a drifted status is logged as a ``partition`` entry of the unit's commit."""
    hot, rows = u.state, []
    sliced = trails_by_design(hot)  # only then may a row's offsets trail
    steady = hot.state.steady  # a steady set's followers as the index keeps them
    for part, rs in hot.state.replica_sets.items():
        pk, new = hot.partition_pk(part), hot_state.view_summary(steady, rs)
        row = stored.get(pk) if pk is not None else None
        if pk is None or row is None:
            continue
        shape = _stored_shape(new)
        if row == shape or (sliced and _trails(row, shape)):
            continue
        rows.append((pk, part, new))
        if row[:6] != shape[:6]:
            u.log({**metadata.partition_entry(
                part, None, metadata.Status(*new.log_status()), "resync: the row drifted"),
                "topic_pk": hot.topics[part[0]]["pk"]})
    return rows


def resync_heal_due() -> bool:
    """True at most once per ``REPLICATION_RESYNC_INTERVAL_S`` across every process."""
    interval_ms = int(settings.REPLICATION_RESYNC_INTERVAL_S * 1000)
    with engine().bound():
        return bool(client().set(key("resync"), "1", nx=True, px=max(1, interval_ms)))


def _nowhere(_: Any) -> None:
    """Resync leaves no election behind that the beat would not find."""


def _trails(row: tuple[Any, ...], shape: tuple[Any, ...]) -> bool:
    """The row's status is the hot state's and its offsets are behind or level: what the
    offsets mirror leaves between its slices past its budget (engine/mirror.py), which it
    brings level itself (a process new after a crash writes every row of a slice once).
    Healing those wrote most rows of a busy cluster at every heal (18,000 of 20,000) and
    counted them as drift. Below the budget no row trails by design: all are healed."""
    return row[:6] == shape[:6] and row[6] <= shape[6] and row[7] <= shape[7]


def _stored_shape(s: hot_state.Summary) -> tuple[Any, ...]:
    """A summary as the store's status columns (the preferred leader is the first replica)
    and offset columns read back."""
    replicas, leader, lrs, resolution, epoch = s.log_status()
    return (replicas, leader, lrs, resolution.value, epoch, replicas[0] if replicas else 0,
            *stored_shape(s))
