"""Celery tasks: thin shells that call services.

Replication: beat runs ``replication_tick`` (every live SPU loop, the
connection manager, simulated producers); with ``REPLICATION_SHARDS`` > 1 that
task coordinates and enqueues one ``replication_shard_tick`` per shard, which
any worker may run. Candidate notices and election timers are state that
every tick acts on; a step only asks for a tick at its next election deadline
(a countdown task that carries nothing). A running
worker refreshes a Redis key so commands know to wait for it (services/waiting.py).
"""
from __future__ import annotations

import logging
import socket
import threading
import time
from collections.abc import Callable
from typing import Any

import redis
from celery import bootsteps, shared_task
from celery.signals import celeryd_after_setup, worker_init, worker_shutdown
from django import db
from django.conf import settings

from cluster.adapters import hot_state, redis_keys, shard_owners, shards
from cluster.adapters.lease import LeaseLost
from cluster.engine.engine import current as engine
from cluster.engine.store_identity import HotStateMismatch
from cluster.adapters.scheduler import Followups
from cluster.adapters.set_codec import RecordsMismatch
from cluster.services import spg_reconcile_invalid, topics_reconcile_waiting
from cluster.services import replication, tick_health
from cluster.services.leaders import leader_rebalance
from cluster.services.simulated_producers import TopicQuota
from cluster.services.store import store_recount

log = logging.getLogger(__name__)


@shared_task
def reconcile_topics() -> dict[str, object]:
    """Periodic reconciliation (beat): the same services commands use."""
    done: dict[str, object] = {
        "topics": topics_reconcile_waiting(), "groups": spg_reconcile_invalid(),
        "partition_rows_resynced": replication.replication_resync_store(
            heal=replication.resync_heal_due())}
    if done["partition_rows_resynced"]:  # drifted rows were counted as they had drifted
        store_recount(by="reconcile")
    return done


@shared_task(bind=True, ignore_result=True)
def replication_tick(self: Any, forwarded: bool = False) -> dict[str, int | str] | None:
    # Overlapping ticks are pointless: wait at most one interval for the lock, then skip.
    try:
        if shards.sharded():
            # Shard tasks handed out commit later and note it themselves.
            return _noted(_coordinate, commits=lambda report: report["shards"] == 0)
        if not forwarded and _forward_whole_tick(self.request.expires):
            return None
        return _noted(_run_whole_tick)
    except LeaseLost:
        log.warning("replication tick refused: its lease expired while it worked (paused?)")
        return None
    except (HotStateMismatch, RecordsMismatch) as exc:  # noted by _noted: /readyz names it
        log.error("replication tick refused: %s", exc.message)
        return None
    except TimeoutError:
        log.info("replication tick skipped: the previous one still holds the state")
        return None


def _noted(tick: Callable[[], Any], *,
           commits: Callable[[Any], bool] = lambda _: True) -> Any:
    """Run ``tick``, noting what came of it (services/tick_health.py: /readyz, /metrics and
    the pages' banner read it); ``commits(result)`` says whether it committed a tick. A
    tick skipped because the last one still works is neither. The store's id is read once
    for the tick, its counters and its note (redis_keys.py)."""
    try:
        with engine().bound():
            result = tick()
            if commits(result):
                tick_health.tick_committed()
    except TimeoutError as exc:
        if isinstance(exc, LeaseLost):
            tick_health.tick_failed(exc)
        raise
    except Exception as exc:
        tick_health.tick_failed(exc)
        raise
    return result


def _forward_whole_tick(expires: Any) -> bool:
    """Send the tick to the node that ran it last, if that is another live node (its
    process holds every set decoded: shard_owners.py); True if sent."""
    if not _node_queue:
        return False
    try:
        owner = shard_owners.tick_route(int(time.time() * 1000), _tick_ms())
    except redis.exceptions.RedisError:
        return False  # run it here: affinity only saves decoding
    if owner is None or owner == _node_queue[0]:
        return False
    # The beat's expiry goes along: a tick the owner cannot start in time is dropped there.
    replication_tick.apply_async(kwargs={"forwarded": True}, queue=owner,
                                 expires=expires or settings.REPLICATION_TICK_S)
    log.debug("replication tick forwarded to %s, which ran the last one", owner)
    return True


def _run_whole_tick() -> dict[str, int]:
    """The tick, marked as this node's while it runs and claimed once it ran."""
    mine = _node_queue[0] if _node_queue else None
    _owner_note(lambda: shard_owners.tick_started(mine, int(time.time() * 1000)), mine)
    ran = False
    try:
        report = replication.replication_tick(lock_timeout_s=settings.REPLICATION_TICK_S)
        ran = True
        return report
    finally:
        _owner_note(lambda: shard_owners.tick_done(mine, int(time.time() * 1000), ran=ran), mine)


def _owner_note(note: Callable[[], None], mine: str | None) -> None:
    if mine is None:
        return  # not a worker node (a test, a command): no routing to keep
    try:
        note()
    except redis.exceptions.RedisError:
        log.warning("could not record which node runs the tick")


def _coordinate() -> dict[str, int | str]:
    cpu = time.process_time()
    ran, work, step_sets = replication.coordinate(lock_timeout_s=settings.REPLICATION_TICK_S)
    if work is None:  # ran whole, or the changing SPUs' sets alone (``ran``)
        return {"shards": 0, "ran": ran.name.lower(), "step_sets": step_sets,
                "cpu_ms": int((time.process_time() - cpu) * 1000)}
    # Each tick starts the queue at another shard: when workers fall behind and tasks
    # expire, every shard loses ticks alike instead of the last one losing them all.
    first = int(time.time() / settings.REPLICATION_TICK_S) % len(work)
    # A shard goes to the node that stepped it last, whose cache holds its sets.
    owners = _shard_routes(len(work))
    for shard in [*range(first, len(work)), *range(first)]:
        # A shard task older than two ticks is dropped: the next tick's does its work.
        replication_shard_tick.apply_async(
            args=[shard, [[t, *quota] for t, quota in work[shard].items()]],
            expires=2 * settings.REPLICATION_TICK_S, queue=owners.get(shard))
    return {"shards": len(work), "ran": ran.name.lower(), "step_sets": step_sets,
            "cpu_ms": int((time.process_time() - cpu) * 1000)}


def _tick_ms() -> int:
    return int(settings.REPLICATION_TICK_S * 1000)


def _shard_routes(shards_now: int) -> dict[int, str]:
    try:
        return shard_owners.routes(shards_now, int(time.time() * 1000), _tick_ms())
    except redis.exceptions.RedisError:
        return {}  # the shared queue: affinity only saves decoding


def _claim(shard: int) -> None:
    if _node_queue:
        try:
            shard_owners.after_step(shard, _node_queue[0], shards.count(),
                                    int(time.time() * 1000), _tick_ms())
        except redis.exceptions.RedisError:
            log.warning("shard %s: could not record which node stepped it", shard)


@shared_task(ignore_result=True)
def replication_shard_tick(shard: int, quotas: list[list[Any]]) -> dict[str, int] | None:
    """``quotas``: [topic, records, start, partitions] per topic (simulated_producers)."""
    try:
        report = _noted(lambda: replication.replication_shard_tick(
            shard, quotas={t: TopicQuota(n, start, parts) for t, n, start, parts in quotas},
            lock_timeout_s=settings.REPLICATION_TICK_S))
        _claim(shard)
        return report
    except LeaseLost:
        log.warning("shard %s tick refused: its lease expired while it worked (paused?)", shard)
        return None
    except (HotStateMismatch, RecordsMismatch) as exc:
        log.error("shard %s tick refused: %s", shard, exc.message)
        return None
    except TimeoutError:
        log.info("shard %s tick skipped: the previous one still holds its shard", shard)
        return None


class CeleryScheduler:
    """The engine's scheduler (composition/bootstrap.py): a step's follow-up is a tick at its
    deadline.

    The task carries nothing: the deadline is in the state, and the beat's next tick
    fires it anyway if this message is lost."""

    def dispatch(self, followups: Followups) -> None:
        # Without a worker nobody would take the task: whoever steps in-process (a command,
        # the API's wait_until) finds the deadline in the state at its next tick.
        if followups.next_deadline_ms is None or not hot_state.worker_alive():
            return
        wait_s = max(0.0, followups.next_deadline_ms / 1000 - time.time())
        # Slightly after the deadline, so the tick finds it due rather than a hair early.
        replication_tick.apply_async(countdown=wait_s + 0.05)

    def kick(self) -> None:
        replication_tick.delay()


# ---- worker presence ----------------------------------------------------------------

_presence_stop = threading.Event()
_presence: list[threading.Thread] = []
# This worker node's own queue (cluster/adapters/shard_owners.py), set before the pool
# forks, so its processes know which node they step for.
_node_queue: list[str] = []


@celeryd_after_setup.connect
def _own_queue(sender: str, instance: Any, **_: Any) -> None:
    queue = f"{settings.CELERY_TASK_DEFAULT_QUEUE}.node.{sender}"
    instance.app.amqp.queues.select_add(queue)
    _node_queue[:] = [queue]


@worker_init.connect
def _announce_worker(sender: Any = None, **_: Any) -> None:
    _presence_stop.clear()
    name = f"{socket.gethostname()}:{id(sender)}"
    thread = threading.Thread(target=_presence_loop, args=(redis_keys.home_url(), name, sender),
                              name="replication-presence", daemon=True)
    thread.start()
    _presence.append(thread)


def _presence_loop(url: str, name: str, worker: Any) -> None:
    # Its own client: the cached one must not be shared with forked pool children.
    client = redis.Redis.from_url(url)
    ttl = settings.REPLICATION_WORKER_TTL_S
    worker_key, nodes_key = _worker_key()
    while not _presence_stop.is_set() and _running(worker):
        try:
            client.set(worker_key, name, ex=ttl)
            if _node_queue:  # this node may be given shards
                client.hset(nodes_key, _node_queue[0], str(int(time.time() * 1000)))
        except redis.exceptions.RedisError:
            log.warning("could not refresh the worker presence key")
        _presence_stop.wait(min(1.0, ttl / 3))
    try:
        client.delete(worker_key)
    except redis.exceptions.RedisError:
        pass  # Redis went first: the key expires by itself
    client.close()


def _worker_key() -> tuple[str, str]:
    """The presence keys of this worker's store, the worker's and its node's (asked once;
    the thread's DB connection closed)."""
    try:
        with engine().bound():
            return hot_state.WORKER, shard_owners.nodes_key()
    finally:
        db.connection.close()


def _running(worker: Any) -> bool:
    # A cold shutdown sends no worker_shutdown signal; the blueprint's state still tells.
    state = getattr(getattr(worker, "blueprint", None), "state", None)
    return state not in (bootsteps.CLOSE, bootsteps.TERMINATE)


@worker_shutdown.connect
def _withdraw_worker(**_: Any) -> None:
    _presence_stop.set()
    while _presence:
        _presence.pop().join(2)
    with engine().serving():
        hot_state.clear_worker()


@shared_task(ignore_result=True)
def leader_rebalance_check() -> None:
    """Kafka's auto.leader.rebalance check (beat, every LEADER_IMBALANCE_CHECK_INTERVAL_S)."""
    try:
        leader_rebalance()
    except TimeoutError:
        log.info("leader rebalance skipped: the replication state is busy")
