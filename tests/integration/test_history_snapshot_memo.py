"""A history snapshot folds on from the moment this process saved last, not from a decode
of it: the same snapshot either way."""
from __future__ import annotations

import pytest

from cluster import ports
from cluster.engine import engine as engine_module
from cluster.engine.engine import Kept
from cluster.services import topic_create
from cluster.services.outages import spu_offline
from cluster.services.records import records_produce
from cluster.services.replication import replication_tick
from cluster.services.waiting import LocalQueue
from history import services
from history.core import replay
from history.models import Snapshot
from tests.helpers import register_spus

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def tick(now: int) -> None:
    queue = LocalQueue()
    replication_tick(now=now, dispatch=queue)
    queue.drain()


def test_a_snapshot_folded_on_from_the_moment_kept_is_the_one_a_decode_gives(
        redis_url, settings, monkeypatch):
    settings.HISTORY_HW_INTERVAL_S = 0  # offsets in the log at every unit
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=6, replication=3)
    tick(1_000)
    assert services.snapshot_take() is not None
    records_produce(topic="orders", partition=2, count=4)
    spu_offline(spu_id=0, by="test")
    tick(2_000)
    tick(3_000)

    decodes: list[int] = []
    decode = replay.decode
    monkeypatch.setattr(replay, "decode", lambda blob: decodes.append(1) or decode(blob))
    kept = services.snapshot_take()
    assert kept is not None and decodes == []  # folded on from the moment kept
    from_kept = decode(bytes(kept.data))

    Snapshot.objects.filter(pk=kept.pk).delete()
    with engine_module.using(ports.engine().replaced(snapshot_kept=Kept())):
        again = services.snapshot_take()  # a process that saved neither: it decodes
    assert decodes == [1]
    assert decode(bytes(again.data)) == from_kept
    assert from_kept.offsets[("orders", 2)][0] >= 4 and from_kept.spus[0] is False


def test_a_snapshot_another_process_saved_since_is_decoded(redis_url, monkeypatch):
    register_spus(0, 1, 2, online=True)
    topic_create(name="orders", partitions=3, replication=3)
    tick(1_000)
    services.snapshot_take()
    spu_offline(spu_id=1, by="test")
    tick(2_000)
    with engine_module.using(ports.engine().replaced(snapshot_kept=Kept())):
        services.snapshot_take()  # another process's: this one's moment is older
    spu_offline(spu_id=2, by="test")
    tick(3_000)
    decodes: list[int] = []
    decode = replay.decode
    monkeypatch.setattr(replay, "decode", lambda blob: decodes.append(1) or decode(blob))
    newest = services.snapshot_take()
    assert decodes == [1]
    moment = decode(bytes(newest.data))
    assert moment.spus[1] is False and moment.spus[2] is False
