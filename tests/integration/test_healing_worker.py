"""Self-healing on the real engine: a Celery worker and a Celery beat (embedded, in threads)
on real Redis, producers writing acks=all to a topic with min LRS 2, short thresholds.

One run, in order: an SPU back before the threshold moves nothing; an operator's
plan being carried out makes self-healing wait; an SPU down past the threshold has
its replicas re-created on the others (every partition back to its factor, racks
kept, LRS never below its minimum) and coming back changes nothing; a rack lost
then back gets its spread restored with one move per partition; notify-only
plans without touching the cluster. No acknowledged record is lost.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from django.db import connection

from cluster.models import Partition, Spu
from cluster.services.outages import rack_offline, rack_online, spu_offline, spu_online
from healing.models import Anomaly
from healing.services import healing_enable, healing_set
from planner.drain import plan_drain
from planner.execution import plan_apply, plan_cancel, plan_finished, plan_pause
from planner.models import Plan
from tests.helpers import register_spus, run
from tests.integration.test_plan_apply_worker import (PARTITIONS, Producer,
                                                       assert_every_acknowledged_record_reads_back)
from tests.integration.test_replication_worker import wait_until, worker  # noqa: F401

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]
RACKS = {0: "a", 1: "a", 2: "b", 3: "b", 4: "c", 5: "c"}


@pytest.fixture
def beat(worker, settings, tmp_path):  # noqa: F811
    """The real beat scheduler with this test's intervals: ticks every 0.2 s, checks every 0.5 s."""
    from celery.beat import EmbeddedService

    from webapp.celery import app

    settings.REPLICATION_TICK_S = 0.2
    settings.REPLICATION_SIMULATED_PRODUCERS = False
    saved = app.conf.beat_schedule
    app.conf.beat_schedule = {
        "replication-tick": {"task": "cluster.tasks.replication_tick", "schedule": 0.2,
                             "options": {"expires": 0.2}},
        "healing-check": {"task": "healing.tasks.healing_check", "schedule": 0.5,
                          "options": {"expires": 3}}}
    service = EmbeddedService(app, thread=True, schedule_filename=str(tmp_path / "beat"))
    service.start()
    yield service
    service.stop()
    app.conf.beat_schedule = saved


class LrsWatch(threading.Thread):
    """Samples every partition's LRS size; keeps the smallest seen."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop, self.smallest = threading.Event(), 99

    def run(self) -> None:
        while not self.stop.is_set():
            sizes = [len(lrs) for lrs in Partition.objects.values_list("lrs", flat=True)]
            self.smallest = min([self.smallest, *sizes])
            time.sleep(0.1)
        connection.close()


def layout() -> dict[int, tuple[int, ...]]:
    return {i: tuple(r) for i, r in Partition.objects.values_list("index", "replicas")}


def racks_spanned(replicas) -> int:
    return len({RACKS[s] for s in replicas})


def anomaly(kind: str, subject: str) -> Anomaly | None:
    return Anomaly.objects.filter(type=kind, subject=subject).order_by("-id").first()


def state_of(kind: str, subject: str) -> Callable[[], str | None]:
    return lambda: getattr(anomaly(kind, subject), "state", None)


def healed(kind: str, subject: str, timeout_s: float = 60) -> Anomaly:
    assert wait_until(lambda: state_of(kind, subject)() == "healed", timeout_s), \
        (Anomaly.objects.values_list("type", "subject", "state", "detail"))
    return anomaly(kind, subject)


def self_healing_plans() -> int:
    return Plan.objects.filter(created_by="self-healing").count()


def test_self_healing_re_creates_lost_replicas_restores_racks_and_waits_for_operators(beat):
    for spu, rack in RACKS.items():
        register_spus(spu, rack=rack, online=True)
    run("topic", "create", "t", "--partitions", str(PARTITIONS), "--replication", "3",
        "--min-lrs", "2")
    for name, value in (("spu_down_alert_after_s", "0.5"), ("spu_down_heal_after_s", "2"),
                        ("fix_after_s", "1"), ("throttle_bytes_per_s", "100000000")):
        healing_set(name=name, value=value, by="test")
    healing_enable(by="test")
    producer, watch = Producer(), LrsWatch()
    producer.start()
    watch.start()

    # An SPU back before the heal threshold: alerted, then cancelled; nothing moved.
    start = layout()
    spu_offline(spu_id=5)
    assert wait_until(lambda: state_of("spu_down", "spu-5")() == "alerting", 10)
    spu_online(spu_id=5)
    assert wait_until(lambda: state_of("spu_down", "spu-5")() == "cancelled", 10)
    assert layout() == start and self_healing_plans() == 0

    # An operator's plan being carried out (paused): self-healing waits past its threshold.
    operator = plan_drain(spu_id=0, by="operator")
    plan_apply(plan_id=operator.pk, max_moves=1, by="operator")
    plan_pause(plan_id=operator.pk, by="operator")
    spu_offline(spu_id=4)
    time.sleep(3)
    assert state_of("spu_down", "spu-4")() == "alerting" and self_healing_plans() == 0
    plan_cancel(plan_id=operator.pk, by="operator")
    assert wait_until(lambda: plan_finished(operator.pk), 20)

    # Then the SPU's replicas are re-created on the others, racks kept apart.
    fixed = healed("spu_down", "spu-4")
    assert fixed.plan.created_by == "self-healing"
    after = layout()
    assert all(len(r) == 3 and 4 not in r and racks_spanned(r) == 3 for r in after.values())
    assert watch.smallest >= 2, "LRS never below the topic's minimum"
    spu_online(spu_id=4)
    time.sleep(1)
    assert layout() == after, "an SPU back afterwards changes nothing while balancing is off"

    # A rack lost: the replicas go where they can; back: one move per partition restores it.
    plans = self_healing_plans()
    rack_offline(rack="c")
    healed("spu_down", "spu-5")
    assert all(racks_spanned(r) == 2 and not {4, 5} & set(r) for r in layout().values())
    rack_online(rack="c")
    spread = healed("rack_spread", "racks")
    moves = spread.plan.moves
    assert len(moves) == PARTITIONS and all(len(m["added"]) == 1 for m in moves)
    assert all(racks_spanned(r) == 3 for r in layout().values())
    assert self_healing_plans() == plans + 2

    # Notify-only: a plan appears, the cluster stays as it is.
    healing_enable(notify_only=True, by="test")
    before = layout()
    spu_offline(spu_id=0)
    assert wait_until(lambda: state_of("spu_down", "spu-0")() == "planned", 15)
    time.sleep(1)
    assert layout() == before and not hasattr(anomaly("spu_down", "spu-0").plan, "execution")

    producer.stop.set()
    producer.join(10)
    watch.stop.set()
    assert_every_acknowledged_record_reads_back(producer)
    assert Spu.objects.filter(resolution="Online").count() == 5
