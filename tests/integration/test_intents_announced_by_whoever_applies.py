"""An operator's change reaches open pages whichever process applies its log entry first.

A command appends its intent to the metadata log, then catches the store up and announces
the events that catch-up wrote. The engine's tick, in the worker, catches the store up too
(its controllers, the resync beat): when it runs between the command's append and its
catch-up, it writes the entry's events and the command's catch-up finds nothing left. The
events must then be announced by the tick, or no page ever hears of them: a killed loop
stayed "up" on every open page (the browser test of SPU states, failing once in a few CI
runs). The tick is stepped exactly in that gap here, not left to timing.
"""
from __future__ import annotations

import pytest

from cluster.adapters import metadata_log
from cluster.services import topic_create
from cluster.services.outages import spu_kill
from cluster.services.replication import replication_resync_store, replication_tick
from cluster.services.waiting import LocalQueue
from tests.helpers import register_spus

# Committed transactions: the intent is appended first, as in production.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.redis]


def tick() -> None:
    queue = LocalQueue()
    replication_tick(dispatch=queue)
    queue.drain()


@pytest.fixture
def announced(redis_url, monkeypatch) -> list[tuple[str, str]]:
    """The (object, operation) of each event staged for the cluster group's pages."""
    sent: list[tuple[str, str]] = []

    def stage_many(batches, **_):
        sent.extend((e["object_name"], e["operation"])
                    for e in batches.get("cluster", {}).get("events", []))

    monkeypatch.setattr("cluster.projections.announce.stage_many", stage_many)
    register_spus(0, 1, 2, 3, online=True)
    topic_create(name="orders", partitions=4, replication=3)
    tick()
    return sent


def _engine_between_append_and_catch_up(monkeypatch, step) -> None:
    """The engine's ``step`` runs right after the command's append, before its catch-up."""
    append = metadata_log.append_intents

    def append_then_step(*args, **kwargs):
        offsets = append(*args, **kwargs)
        step()
        return offsets

    monkeypatch.setattr(metadata_log, "append_intents", append_then_step)


@pytest.mark.parametrize("step, compare_s", [
    (tick, 60),  # as deployed: the tick folds the intents since the one it adopted
    (tick, 0),  # the tick's full comparison with the rows
    (lambda: replication_resync_store(heal=False), 60),
], ids=["tick-folding", "tick-comparing", "resync-beat"])
def test_a_kill_applied_by_the_engine_first_is_still_announced(announced, monkeypatch, settings,
                                                               step, compare_s):
    settings.REPLICATION_TOPOLOGY_COMPARE_S = compare_s
    _engine_between_append_and_catch_up(monkeypatch, step)
    announced.clear()
    spu_kill(spu_id=3, by="cli")
    assert announced.count(("3", "kill")) == 1


def test_a_kill_applied_by_its_command_is_announced_once(announced):
    announced.clear()
    spu_kill(spu_id=3, by="cli")
    tick()
    assert announced.count(("3", "kill")) == 1
