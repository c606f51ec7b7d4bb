"""Replication shell: drive the pure core (cluster/core/replication) from tasks and commands.

Every use case is one load-modify-save of the hot state (cluster/adapters/
hot_state.py) under the store's fenced lease (cluster/adapters/lease.py: a
holder that lost it has its save refused, and nothing after the save runs):
load, feed the core events, save the replica sets whose encoding changed,
mirror leader / LRS / resolution / HW / LEO changes into the
store (one executemany, and one event per partition whose leader, LRS or
resolution moved), then hand the follow-ups (candidate notices, election
timers) to a dispatcher: Celery tasks in the worker, or a local queue when a
command steps the services itself (cluster/adapters/settle.py).

A tick runs every live SPU loop at once: they share replica sets and the lock,
so one load per tick beats one per SPU. A stopped ("killed") loop neither
fetches nor serves nor refreshes its heartbeat; the connection manager marks
its SPU offline once the heartbeat is older than the timeout (003).

With ``REPLICATION_SHARDS`` > 1 a tick is a coordinator (``replication_coordinate``:
cluster-wide work under the cluster lease) and one task per shard
(``replication_shard_tick``: the SPU loops, producers and reconcile of that
shard's partitions under its lease); cluster/adapters/shards.py says who
locks what. With one shard everything runs as one tick, as before.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from cluster.adapters import hot_state, shards, tick_steps
from cluster.adapters.lease import CLUSTER_LOCK
from cluster.core import replication as core
from cluster.core.replication import (AckFailed, Acks, Action, Key, NotifyCandidate,
                                      RecordsAcknowledged, ReplicaTruncated, Resolution,
                                      ResolutionChanged, StartElectionTimer)
from cluster.core.spus import SpuResolution
from cluster.core.topic_controller import TopicResolution
from cluster.errors import NotFound
from cluster.adapters.hot_state import HotState, ReplicaStatus, Summary, Ticket
from cluster.metrics.counters import timed_tick
from cluster.metrics.hooks import count_step, log_events
from cluster.models import Event, Partition, Spu, Topic
from cluster.services.events import log_event
from cluster.services.replica_maps import mirror_replica_maps, move_events
from cluster.services.spus import spu_set_resolution
from cluster.adapters.live_batches import publish_partitions
from cluster.adapters.scheduler import Dispatch, Followups, scheduler
from cluster.adapters.store_identity import locked_for_this_store
from cluster.services.recovery import hot_state_check_against_store
from webapp.perf import gc_paused
from cluster.services.simulated_producers import (produce_quotas, producer_quotas,
                                                  simulate_producers)

log = logging.getLogger(__name__)
CONTROLLER = "partition-controller"
CONNECTION_MANAGER = "connection-manager"
Step = Callable[[HotState], list[Action]]


def now_ms() -> int:
    return int(time.time() * 1000)


def run_locked(step: Step, *, keys: Iterable[Key] | None = None,
               dispatch: Dispatch | None = None, lock_timeout_s: float | None = None,
               record_ids: int = 0) -> list[Action]:
    """Load (all, or the sets of ``keys``), apply ``step``, save, mirror, dispatch.

    ``record_ids``: how many records ``step`` may produce (sharded, ids come in blocks).
    """
    if keys is not None and shards.sharded():
        wanted = list(keys)
        return _run_on_shards(step, locks=shards.locks_of(wanted), pick=lambda _: wanted,
                              record_ids=record_ids, dispatch=dispatch,
                              lock_timeout_s=lock_timeout_s)
    with locked_for_this_store(lock_timeout_s), tick_steps.collecting_after_save() as after:
        hot = hot_state.load(keys)
        shards.adopt_record_ids(hot.state)
        actions = step(hot)
        changed = hot_state.save(hot)
        mirror_to_store(hot, actions, changed)
        for callback in after:  # only once the fenced save landed, still under the lease
            callback()
    (dispatch or scheduler().dispatch)(Followups.of(actions))
    return actions


def _run_on_shards(step: Step, *, locks: list[str],
                   pick: Callable[[dict[str, Any]], Iterable[Key]], record_ids: int,
                   dispatch: Dispatch | None, lock_timeout_s: float | None) -> list[Action]:
    """``run_locked`` under some shards' leases: their sets only, saved without the meta."""
    with locked_for_this_store(lock_timeout_s, locks=locks), \
            tick_steps.collecting_after_save() as after:
        hot = hot_state.load_selected(pick)
        first = hot.state.next_record_id
        if record_ids:
            first = hot.state.next_record_id = shards.reserve_record_ids(record_ids, first)
        actions = step(hot)
        if hot.state.next_record_id > first + record_ids:
            # Nothing is saved: ids past the block could collide with another shard's.
            raise RuntimeError(f"a step produced {hot.state.next_record_id - first} records "
                               f"with {record_ids} ids reserved")
        changed = hot_state.save_sets(hot)
        mirror_to_store(hot, actions, changed)
        for callback in after:
            callback()
    (dispatch or scheduler().dispatch)(Followups.of(actions))
    return actions


# ---- use cases ----------------------------------------------------------------

def replication_tick(*, now: int | None = None, dispatch: Dispatch | None = None,
                     lock_timeout_s: float | None = None) -> dict[str, int]:
    """Sync topology and SPU status from the store, run every live SPU loop,
    let the connection manager drop silent SPUs, run the simulated producers."""
    at = now if now is not None else now_ms()
    report: dict[str, int] = {}

    def step(hot: HotState) -> list[Action]:
        stopped = hot_state.killed()
        actions = sync_topology(hot)
        hot_state_check_against_store(hot)
        actions += run_spu_loops(hot, at, stopped)
        if settings.REPLICATION_SIMULATED_PRODUCERS:
            actions += simulate_producers(hot, at, stopped)
        for extra in tick_steps.installed():
            actions += extra(hot, at)
        # 001 only retries Offline sets when an SPU returns; the core's reconcile covers the rest.
        actions += core.handle(hot.state, core.ReconcileElections())
        report.update(sets=len(hot.state.replica_sets), actions=len(actions))
        return actions

    with timed_tick():
        run_locked(step, dispatch=dispatch, lock_timeout_s=lock_timeout_s)
    return report


def replication_coordinate(*, now: int | None = None, dispatch: Dispatch | None = None,
                           lock_timeout_s: float | None = None
                           ) -> dict[int, dict[Key, int]] | None:
    """The cluster-wide part of a sharded tick; returns each shard's producer quotas.

    A quiet tick holds only the cluster lease and loads no replica set: it beats
    the live SPUs, applies topic settings and accounts the simulated producers.
    When something cluster-wide must change replica sets (a topology or SPU
    status change, a silent SPU, a tick step such as a running plan, a Redis
    restart to check against the store) it runs the whole tick instead, under
    every lease, and returns None: no shard task is needed that tick.
    """
    at = now if now is not None else now_ms()
    quotas: dict[Key, int] = {}
    with locked_for_this_store(lock_timeout_s, locks=[CLUSTER_LOCK]), \
            tick_steps.collecting_after_save() as after:
        hot = hot_state.load_selected(lambda _: ())
        hot.state.replica_sets = shards.UnloadedSets()
        quiet = _quiet_tick(hot, at)
        if quiet is not None:
            if settings.REPLICATION_SIMULATED_PRODUCERS:
                with gc_paused():  # one entry per partition: collections cost more than the work
                    quotas = producer_quotas(hot, at)
            hot_state.save_meta(hot)
            if quiet:
                mirror_to_store(hot, quiet, [])
            for callback in after:
                callback()
    if quiet is None:
        replication_tick(now=now, dispatch=dispatch, lock_timeout_s=lock_timeout_s)
        return None
    with gc_paused():
        return shards.split(quotas, shards.count())


def _quiet_tick(hot: HotState, at: int) -> list[Action] | None:
    """Cluster-wide work that needs no replica set, or None if this tick needs them all."""
    if hot.checked != hot_state.redis_run_id() or not _topology_unchanged(hot):
        return None
    stopped = hot_state.killed()
    live = [s for s, up in hot.state.spus.items() if up and s not in stopped]
    hot_state.beat(live, at)
    beats, timeout_ms = hot_state.heartbeats(), settings.REPLICATION_HEARTBEAT_TIMEOUT_S * 1000
    if any(at - beats.get(s, at) > timeout_ms for s, up in hot.state.spus.items() if up):
        return None  # the connection manager drops an SPU: every set it is in changes
    hot_state.beat([s for s, up in hot.state.spus.items() if up and s not in beats], at)
    actions: list[Action] = []
    try:
        for extra in tick_steps.installed():
            actions += extra(hot, at)
    except shards.NeedsWholeState:
        return None
    return actions


def _topology_unchanged(hot: HotState) -> bool:
    """SPUs and provisioned topics as the hot state has them; topic settings applied here."""
    store = dict(Spu.objects.values_list("id", "resolution"))
    spus = hot.state.spus
    if store.keys() - spus.keys() or any(
            up != (store.get(s) == SpuResolution.ONLINE.value) for s, up in spus.items()):
        return False
    rows = {name: (pk, min_lrs, max_lag, rate, unclean)
            for pk, name, min_lrs, max_lag, rate, unclean in
            Topic.objects.filter(resolution=TopicResolution.PROVISIONED.value)
            .values_list("id", "name", "min_lrs", "max_lag", "producer_rate",
                         "unclean_leader_election")}
    if {n: r[0] for n, r in rows.items()} != {n: t["pk"] for n, t in hot.topics.items()}:
        return False
    for name, (_, min_lrs, max_lag, rate, unclean) in rows.items():
        cfg = hot.state.topics[name]
        cfg.min_lrs, cfg.max_lag, cfg.unclean_leader_election = min_lrs, max_lag, unclean
        hot.topics[name]["rate"] = rate
    return True


def replication_shard_tick(shard: int, *, quotas: dict[Key, int] | None = None,
                           now: int | None = None, dispatch: Dispatch | None = None,
                           lock_timeout_s: float | None = None) -> dict[str, int]:
    """One shard's part of a tick: its live SPU loops, its producers' records, reconcile."""
    n, due = shards.count(), dict(quotas or {})
    at = now if now is not None else now_ms()
    report: dict[str, int] = {"shard": shard}

    def step(hot: HotState) -> list[Action]:
        state, stopped = hot.state, hot_state.killed()
        max_records = settings.REPLICATION_MAX_RECORDS_PER_FETCH or None
        actions = core.advance_moves(state, at)
        actions += core.replication_step(state, at, max_records,
                                         stopped={s for s in stopped if state.spus.get(s)})
        actions += produce_quotas(hot, due, stopped)
        actions += core.handle(state, core.ReconcileElections())
        report.update(sets=len(state.replica_sets), actions=len(actions))
        return actions

    started, cpu = time.perf_counter(), time.process_time()
    with timed_tick():
        _run_on_shards(step, locks=[shards.lock_name(shard)],
                       pick=lambda topics: shards.keys_of_shard(topics, shard, n),
                       record_ids=sum(due.values()), dispatch=dispatch,
                       lock_timeout_s=lock_timeout_s)
    # Wall and CPU time apart: on a shared machine the gap is time spent waiting for a core.
    report["ms"] = int((time.perf_counter() - started) * 1000)
    report["cpu_ms"] = int((time.process_time() - cpu) * 1000)
    return report


def replication_notices(notices: list[NotifyCandidate], *,
                        dispatch: Dispatch | None = None) -> list[Action]:
    """Each candidate SPU promotes itself and reports; the SC installs the leader.

    A stopped SPU loop answers nothing, so its election waits for the timer.
    """
    def step(hot: HotState) -> list[Action]:
        stopped = hot_state.killed()
        actions: list[Action] = []
        for notice in notices:
            if notice.candidate in stopped or notice.candidate not in hot.state.spus:
                continue
            if (notice.topic, notice.partition) not in hot.state.replica_sets:
                continue  # the topic was deleted since
            reply = core.spu_receive_notice(hot.state, notice)
            if reply is not None:
                actions += core.handle(hot.state, reply)
        return actions

    return run_locked(step, keys={(n.topic, n.partition) for n in notices}, dispatch=dispatch)


def replication_timers(timers: list[StartElectionTimer], *,
                       dispatch: Dispatch | None = None) -> list[Action]:
    """Wait-for-response timers firing; the core ignores stale ones."""
    def step(hot: HotState) -> list[Action]:
        actions: list[Action] = []
        for t in timers:
            if (t.topic, t.partition) in hot.state.replica_sets:
                actions += core.handle(hot.state, core.TimerFired(
                    t.topic, t.partition, t.candidate, t.attempt))
        return actions

    return run_locked(step, keys={(t.topic, t.partition) for t in timers}, dispatch=dispatch)


# ---- topology: the store is the spec, the hot state follows it ----------------

def sync_topology(hot: HotState) -> list[Action]:
    """SPUs registered/unregistered, their Online/Offline status, topics provisioned/deleted."""
    store = dict(Spu.objects.values_list("id", "resolution"))
    _sync_registered(hot, store)
    actions = _sync_status(hot, store)
    return actions + _sync_topics(hot)


def _sync_registered(hot: HotState, store: dict[int, str]) -> None:
    state = hot.state
    for spu in sorted(store.keys() - state.spus.keys()):
        core.register_spu(state, spu, online=False)
    for spu in sorted(state.spus.keys() - store.keys()):
        # An unregistered SPU named in a replica map stays, offline, for the election rules.
        if not state.sets_of(spu):
            del state.spus[spu]
            hot_state.forget_heartbeat(spu)


def _sync_status(hot: HotState, store: dict[int, str]) -> list[Action]:
    actions: list[Action] = []
    for spu, online in sorted(hot.state.spus.items()):
        wanted = store.get(spu) == SpuResolution.ONLINE.value
        if wanted and not online:
            actions += core.handle(hot.state, core.SpuOnline(spu))
        elif online and not wanted:
            actions += core.handle(hot.state, core.SpuOffline(spu))
    return actions


def _sync_topics(hot: HotState) -> list[Action]:
    rows = {name: (pk, min_lrs, max_lag, rate, unclean)
            for pk, name, min_lrs, max_lag, rate, unclean in
            Topic.objects.filter(resolution=TopicResolution.PROVISIONED.value)
            .values_list("id", "name", "min_lrs", "max_lag", "producer_rate",
                         "unclean_leader_election")}
    for name in [n for n, t in hot.topics.items() if rows.get(n, (None,))[0] != t["pk"]]:
        _drop_topic(hot, name)
    actions: list[Action] = []
    for name, (pk, min_lrs, max_lag, rate, unclean) in rows.items():
        if name not in hot.topics:
            actions += _add_topic(hot, name, pk, min_lrs, max_lag)
        cfg = hot.state.topics.get(name)
        if cfg is None:
            continue  # deleted while this tick read the store
        cfg.min_lrs, cfg.max_lag, cfg.unclean_leader_election = min_lrs, max_lag, unclean
        hot.topics[name]["rate"] = rate
    return actions


def _drop_topic(hot: HotState, name: str) -> None:
    for key in [k for k in hot.state.replica_sets if k[0] == name]:
        del hot.state.replica_sets[key]
        hot.raw.pop(key, None)
        hot.before.pop(key, None)
    hot.state.topics.pop(name, None)
    hot.topics.pop(name, None)
    hot.dropped.add(name)
    hot.state.reindex()


def _add_topic(hot: HotState, name: str, pk: int, min_lrs: int, max_lag: int) -> list[Action]:
    rows = list(Partition.objects.filter(topic_id=pk).order_by("index")
                .values_list("id", "replicas"))
    if not rows:
        return []  # deleted since this tick read the topic list: the next tick drops it
    for spu in {s for _, replicas in rows for s in replicas} - hot.state.spus.keys():
        core.register_spu(hot.state, spu, online=False)
    lag_time = settings.REPLICATION_LAG_TIME_MAX_MS or None
    actions = core.add_topic(hot.state, name, [replicas for _, replicas in rows],
                             max_lag=max_lag, min_lrs=min_lrs, lag_time_max_ms=lag_time)
    hot.topics[name] = {"pk": pk, "partitions": [p for p, _ in rows], "rate": 0.0}
    log_event(CONTROLLER, "topic", name, "replication-start", {"partitions": len(rows)})
    return actions


# ---- SPU loops and the connection manager --------------------------------------

def run_spu_loops(hot: HotState, at: int, stopped: set[int]) -> list[Action]:
    """Every live loop beats and fetches; then silent SPUs are dropped (003)."""
    state = hot.state
    hot_state.beat([s for s, up in state.spus.items() if up and s not in stopped], at)
    actions = connection_manager(hot, at)
    max_records = settings.REPLICATION_MAX_RECORDS_PER_FETCH or None
    # Moves decide before the fetches, on the state the previous step left (core.reassign).
    actions += core.advance_moves(state, at)
    return actions + core.replication_step(state, at, max_records,
                                           stopped={s for s in stopped if state.spus.get(s)})


def connection_manager(hot: HotState, at: int) -> list[Action]:
    """An SPU whose heartbeat stopped loses its connection and is marked offline."""
    timeout_ms = settings.REPLICATION_HEARTBEAT_TIMEOUT_S * 1000
    beats = hot_state.heartbeats()
    actions: list[Action] = []
    for spu in [s for s, up in hot.state.spus.items() if up]:
        last = beats.get(spu)
        if last is None:
            hot_state.beat([spu], at)  # first sight: the clock starts now
        elif at - last > timeout_ms:
            _mark_offline(spu, at - last)
            actions += core.handle(hot.state, core.SpuOffline(spu))
    return actions


def _mark_offline(spu: int, silent_ms: int) -> None:
    try:
        spu_set_resolution(spu_id=spu, resolution=SpuResolution.OFFLINE, by=CONNECTION_MANAGER)
    except NotFound:
        return
    log_event(CONNECTION_MANAGER, "spu", spu, "heartbeat-lost", {"silent_ms": silent_ms})


# ---- mirroring into the store ---------------------------------------------------

def mirror_to_store(hot: HotState, actions: list[Action], changed: list[Key]) -> None:
    """Write rows whose status moved; log leader/LRS/resolution moves; publish; settle acks."""
    reasons = {(a.topic, a.partition): a.reason for a in actions if isinstance(a, ResolutionChanged)}
    rows, events, moved = [], [], []
    for key in changed:
        rs = hot.state.replica_sets.get(key)
        pk = hot.partition_pk(key)
        new, old = (hot_state.summary(rs), hot.before.get(key)) if rs else (None, None)
        if rs is None or pk is None or new == old:
            continue
        rows.append((pk, key, new))
        if old is not None and old.status() != new.status():
            events.append(_status_event(key, old, new, reasons.get(key, "")))
            moved.append(key)
        hot.before[key] = new
    events += [_truncation_event(a) for a in actions if isinstance(a, ReplicaTruncated)]
    events += move_events(actions)
    count_step(actions, events)
    with transaction.atomic():
        events += mirror_replica_maps(hot, actions)
        _write_rows(rows)
        Event.objects.bulk_create(events, batch_size=1000)
    log_events(events)
    _settle_tickets(actions)
    publish_partitions([(key, new) for _, key, new in rows], moved=moved)


def _status_event(key: Key, old: Summary, new: Summary, reason: str) -> Event:
    names = ("leader", "lrs", "resolution")
    params = {n: {"from": _plain(a), "to": _plain(b)}
              for n, a, b in zip(names, old.status(), new.status()) if a != b}
    return Event(actor=CONTROLLER, object_type="partition", object_name=f"{key[0]}/{key[1]}",
                 operation="status", params=params, result=reason)


def _truncation_event(a: ReplicaTruncated) -> Event:
    return Event(actor=CONTROLLER, object_type="partition",
                 object_name=f"{a.topic}/{a.partition}", operation="truncate",
                 params={"spu": a.spu, "from": a.old_leo, "to": a.new_leo}, result=a.reason)


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value.value if isinstance(value, Resolution) else value


def _write_rows(rows: list[tuple[int, Key, Summary]]) -> None:
    """One executemany: bulk_update's CASE chains cost ~20x more at 10,000 rows."""
    if not rows:
        return
    table = Partition._meta.db_table
    # HW only advances: a holder paused between its save and this write must not pull it back.
    sql = (f"UPDATE {table} SET leader = %s, lrs = %s, resolution = %s, "
           f"hw = CASE WHEN hw > %s THEN hw ELSE %s END, "
           f"leo = %s, replica_status = %s WHERE id = %s")
    params = [(s.leader, _json_ints(s.lrs), s.resolution.value, s.hw, s.hw, s.stored_leo(),
               _json_status(s.replicas), pk) for pk, _, s in rows]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def replication_resync_store() -> int:
    """Rewrite partition rows that drifted from the hot state; returns how many.

    A process that dies between saving Redis and writing the store leaves rows
    stale until their partition changes again; periodic reconciliation heals them.
    Sharded, it takes one shard at a time, so the ticks of the others go on.
    """
    if shards.sharded():
        return _resync_by_shard()
    with locked_for_this_store():
        hot = hot_state.load()
        stored = {pk: tuple(row) for pk, *row in Partition.objects.values_list(
            "id", "leader", "lrs", "resolution", "hw", "leo").iterator(chunk_size=5000)}
        drifted = []
        for key, rs in hot.state.replica_sets.items():
            pk, new = hot.partition_pk(key), hot_state.summary(rs)
            if pk in stored and stored[pk] != _stored_shape(new):
                drifted.append((pk, key, new))
        _write_rows(drifted)
    return len(drifted)


def _resync_by_shard() -> int:
    # Rows read before a shard's lease may be a tick old: a row then rewritten needlessly
    # still gets the hot state's current values, written under that shard's lease.
    stored = {pk: tuple(row) for pk, *row in Partition.objects.values_list(
        "id", "leader", "lrs", "resolution", "hw", "leo").iterator(chunk_size=5000)}
    n, total = shards.count(), 0
    for shard in range(n):
        with locked_for_this_store(locks=[shards.lock_name(shard)]):
            hot = hot_state.load_selected(lambda topics: shards.keys_of_shard(topics, shard, n))
            drifted = []
            for key, rs in hot.state.replica_sets.items():
                pk, new = hot.partition_pk(key), hot_state.summary(rs)
                if pk in stored and stored[pk] != _stored_shape(new):
                    drifted.append((pk, key, new))
            _write_rows(drifted)
        total += len(drifted)
    return total


def _stored_shape(s: Summary) -> tuple[Any, ...]:
    """A summary as the store's (leader, lrs, resolution, hw, leo) columns read back."""
    return (s.leader, list(s.lrs), s.resolution.value, s.hw, s.stored_leo())


def _json_ints(values: tuple[int, ...]) -> str:
    # Hand-built JSON: json.dumps twice per row was a tenth of a busy tick.
    return "[" + ", ".join(map(str, values)) + "]"


def _json_status(status: tuple[ReplicaStatus, ...]) -> str:
    return "[" + ", ".join(f'{{"spu": {s}, "leo": {leo}, "hw": {hw}}}'
                           for s, leo, hw in status) + "]"


def _settle_tickets(actions: list[Action]) -> None:
    acks = [a for a in actions if (isinstance(a, RecordsAcknowledged) and a.acks is Acks.ALL)
            or isinstance(a, AckFailed)]
    if not acks:
        return
    for first, ticket in hot_state.open_tickets().items():
        if _apply_acks(first, ticket, acks):
            done = ticket["state"] != "pending"
            hot_state.write_ticket(first, ticket, still_open=not done)


def _apply_acks(first: int, ticket: Ticket, acks: list[Action]) -> bool:
    ids = range(first, first + ticket["count"])
    moved = False
    for a in acks:
        hits = sum(1 for _, rid in a.records if rid in ids)
        if not hits:
            continue
        moved = True
        if isinstance(a, AckFailed):
            ticket.update(state="failed", code=a.code, reason=a.reason)
        else:
            ticket["acked"] = ticket.get("acked", 0) + hits
    if ticket["state"] == "pending" and ticket.get("acked", 0) >= ticket["count"]:
        ticket["state"] = "acknowledged"
    return moved
