"""Waiting for an outcome: await the worker when one runs, else step in-process.

Commands and scripts must work without a Celery worker. ``wait_until`` checks
for one cheaply (the key a running worker refreshes, see cluster/tasks.py):
with a worker it nudges a tick and polls the hot state; without one it runs
the very same ticks here (each answers candidate notices and fires the election
timers that are due: they are state), until the outcome holds.

"Settled" means one thing across the project: the elections a change caused have run
(the hot state agrees with the store's SPUs and no partition is electing), as in
``elections_settled``, ``settle_outage``, ``net --settle`` and the ``settled`` JSON key.
Waiting for anything else is ``wait_until``.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from django.conf import settings

from cluster.adapters import hot_state
from cluster.core.replication import Resolution
from cluster.core.spus import SpuResolution
from cluster.core.topic_controller import TopicResolution
from cluster.adapters.scheduler import Followups
from cluster.engine.engine import current as engine
from cluster.models import Spu, Topic
from cluster.services import replication

POLL_S = 0.1
IN_PROCESS_PAUSE_S = 0.05
BUSY = (Resolution.ELECTION, Resolution.CANDIDATE_FOUND)


class LocalQueue:
    """The in-process dispatcher: elections are state, so there is nothing to queue; a
    command stepping the services here simply ticks again until its outcome holds."""

    def __call__(self, followups: Followups) -> None:
        self.next_deadline_ms = followups.next_deadline_ms

    def drain(self) -> None:
        """Kept for callers that stepped notices and timers here before they were state."""

    @property
    def idle(self) -> bool:
        return True


def worker_running() -> bool:
    return hot_state.worker_alive()


def kick() -> None:
    """Ask the worker for a tick now (SPU status changed, a write is waiting)."""
    engine().scheduler.kick()


def wait_until(done: Callable[[], bool], *, timeout_s: float | None = None) -> bool:
    """Until ``done()``: poll a running worker, or step the services here. False on timeout."""
    wait = settings.REPLICATION_SETTLE_TIMEOUT_S if timeout_s is None else timeout_s
    deadline = time.monotonic() + wait
    with engine().bound():  # the store's id read once for every poll, not at each key
        if worker_running():
            return _await_worker(done, deadline)
        return _step_here(done, deadline)


def _await_worker(done: Callable[[], bool], deadline: float) -> bool:
    last_kick = 0.0
    while not done():
        now = time.monotonic()
        if now > deadline:
            return False
        if not worker_running():
            return _step_here(done, deadline)  # the worker died meanwhile: do its work here
        if now - last_kick >= settings.REPLICATION_TICK_S:
            kick()  # beat may not run (tests); an extra tick only fetches sooner
            last_kick = now
        time.sleep(POLL_S)
    return True


def _step_here(done: Callable[[], bool], deadline: float) -> bool:
    queue = LocalQueue()
    while True:
        replication.replication_tick(dispatch=queue)
        if done():
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(IN_PROCESS_PAUSE_S)


# ---- outcomes callers wait for ---------------------------------------------------

def elections_settled(spu_ids: Iterable[int] = ()) -> bool:
    """The hot state agrees with the store on these SPUs and no election is running."""
    ids = list(spu_ids)
    store = dict(Spu.objects.filter(id__in=ids).values_list("id", "resolution"))
    hot = hot_state.load()
    for spu in ids:
        if spu in store and hot.state.spus.get(spu) != (store[spu] == SpuResolution.ONLINE.value):
            return False
    return not any(rs.resolution in BUSY for rs in hot.state.replica_sets.values())


def spus_offline_in_store(spu_ids: Iterable[int]) -> bool:
    ids = list(spu_ids)
    return not Spu.objects.filter(id__in=ids, resolution=SpuResolution.ONLINE.value).exists()


def topic_replicated(topic: str) -> bool:
    return topic in hot_state.replicated_topics()


def wait_elections_settled(spu_ids: Iterable[int], *, wait_offline: bool = False,
                           timeout_s: float | None = None) -> bool:
    ids = list(spu_ids)
    return wait_until(lambda: (not wait_offline or spus_offline_in_store(ids))
                      and elections_settled(ids), timeout_s=timeout_s)


def wait_replicated(topic: str) -> bool:
    """A topic created a moment ago reaches the hot state at the next tick."""
    with engine().bound():
        if topic_replicated(topic):
            return True
        if not Topic.objects.filter(name=topic,
                                    resolution=TopicResolution.PROVISIONED.value).exists():
            return False
        return wait_until(lambda: topic_replicated(topic), timeout_s=10)
