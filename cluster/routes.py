"""Where Celery sends the engine's periodic tasks (settings.CELERY_TASK_ROUTES).

With one shard the whole tick has an owner, the worker node whose process holds every
replica set decoded (cluster/adapters/shard_owners.py). Beat's tick goes straight to that
node's queue, and the periodic tasks that take seconds on a large cluster (the healing
check, the reconcile and its store resync, history snapshots, the leader balance check)
go to another live node, so they never hold the owner's one process while a tick waits.
Anything else, or when Redis cannot say, takes the shared queue as before; a tick that
lands on the wrong node is still forwarded (cluster/tasks.py). Routing only saves work:
every tick takes the fenced lease wherever it runs.

The router runs in the sender's process (beat, a command, a request) and is a shell of its
own: it binds the store to read the owners (a key made outside any binding is refused,
and the refusal would silently send every task to the shared queue).
"""
from __future__ import annotations

import logging
import time
from typing import Any

from django.conf import settings

from cluster import ports
from cluster.adapters import shard_owners, shards

log = logging.getLogger(__name__)

TICK = "cluster.tasks.replication_tick"
AWAY_FROM_THE_TICK = frozenset({
    "healing.tasks.healing_check", "cluster.tasks.reconcile_topics",
    "history.tasks.history_snapshot", "cluster.tasks.leader_rebalance_check"})


def route_task(name: str, args: Any, kwargs: Any, options: dict[str, Any], task: Any = None,
               **_: Any) -> dict[str, str] | None:
    """Celery's router: a queue for the tick and the tasks kept away from it, else None
    (the default queue; a queue given to apply_async wins over this)."""
    if name != TICK and name not in AWAY_FROM_THE_TICK:
        return None
    now_ms, tick_ms = int(time.time() * 1000), int(settings.REPLICATION_TICK_S * 1000)
    try:
        if shards.sharded():
            if name == TICK:
                return None  # the coordinator loads no set; shards have owners of their own
            with ports.engine().serving():
                return _same_node(name, sorted(shard_owners.live_nodes(now_ms, tick_ms)))
        with ports.engine().serving():
            owner, others = shard_owners.tick_placement(now_ms, tick_ms)
    except Exception:  # noqa: BLE001 (a send must not fail for want of a route)
        log.debug("no route for %s: the shared queue", name, exc_info=True)
        return None
    if name == TICK:
        return {"queue": owner} if owner else None
    if owner is None or not others:
        return None
    return _same_node(name, others)


def _same_node(name: str, nodes: list[str]) -> dict[str, str] | None:
    """The node of ``nodes`` (sorted) that runs ``name`` while they stay the same.

    Sharded, each worker holds only its shards' sets, and these tasks read the whole
    cluster: the healing check's snapshot and the leader balance are kept by the process
    that made them while the metadata log stands still. Sent to whichever worker came
    free, each run paid the whole read again: 2 s at 100,000 partitions, 8-10 s at
    300,000, seconds in which that worker stepped none of its shards."""
    return {"queue": nodes[sum(map(ord, name)) % len(nodes)]} if nodes else None
