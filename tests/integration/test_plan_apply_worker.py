"""A scale-out plan carried out by a real Celery worker on real Redis while producers write.

At the end every partition has the plan's target (or, after a cancel, its target
or its original list), leaders are balanced, every acknowledged record reads
back and no HW ever went backwards -- also with a cancel and an SPU outage halfway.
"""
from __future__ import annotations

import json
import threading
import time
from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from cluster.adapters import hot_state
from cluster.services.waiting import kick
from cluster.models import Partition
from cluster.services.outages import spu_offline, spu_online
from cluster.services.records import records_consume, records_produce_and_wait
from planner.execution import plan_apply, plan_cancel, plan_finished, plan_status
from planner.models import PlanExecution
from tests.helpers import register_spus, run
from tests.integration.test_replication_worker import wait_until, worker  # noqa: F401

pytestmark = [pytest.mark.redis, pytest.mark.django_db(transaction=True)]
PARTITIONS = 12


class Producer(threading.Thread):
    """Writes acks=all records round robin over the partitions; keeps the acknowledged ones."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.stop = threading.Event()
        self.acked: dict[int, list[str]] = {p: [] for p in range(PARTITIONS)}

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            p, value = n % PARTITIONS, f"v{n}"
            out = records_produce_and_wait(topic="t", partition=p, acks="all", values=[value],
                                           wait_s=5)
            if out.state == "acknowledged":
                self.acked[p].append(value)
            n += 1
        connection.close()


class HwWatch:
    """Samples every partition's HW; remembers any that went backwards."""

    def __init__(self) -> None:
        self.last: dict[tuple[str, int], int] = {}
        self.backwards: list[tuple[tuple[str, int], int, int]] = []

    def sample(self) -> None:
        for key, rs in hot_state.load().state.replica_sets.items():
            if rs.hw < self.last.get(key, 0):
                self.backwards.append((key, self.last[key], rs.hw))
            self.last[key] = max(rs.hw, self.last.get(key, 0))


@pytest.fixture
def fast_ticks(settings):
    settings.REPLICATION_TICK_S = 0.2
    settings.REPLICATION_SIMULATED_PRODUCERS = False


@pytest.fixture
def scale_out(worker, fast_ticks):  # noqa: F811
    register_spus(0, 1, 2, 3, online=True)
    run("topic", "create", "t", "--partitions", str(PARTITIONS), "--replication", "2")
    register_spus(4, 5, online=True)
    out = StringIO()
    call_command("plan", "rebalance", "--json", stdout=out, stderr=StringIO())
    plan = json.loads(out.getvalue())
    assert plan["moves"]
    return plan


def carry_out(plan_id: int, during=None, timeout_s: float = 90,
              max_moves: int = 4) -> tuple[Producer, HwWatch]:
    """Apply with producers running; ``during(status)`` may act halfway."""
    producer, watch = Producer(), HwWatch()
    producer.start()
    time.sleep(0.5)
    plan_apply(plan_id=plan_id, max_moves_per_spu=2, max_moves=max_moves, by="test")
    deadline = time.monotonic() + timeout_s
    while not plan_finished(plan_id) and time.monotonic() < deadline:
        kick()
        watch.sample()
        if during:
            during(plan_status(plan_id=plan_id))
        time.sleep(0.2)
    producer.stop.set()
    producer.join(10)
    watch.sample()
    assert plan_finished(plan_id), plan_status(plan_id=plan_id)
    return producer, watch


def replica_lists() -> dict[int, list[int]]:
    return dict(Partition.objects.filter(topic__name="t").values_list("index", "replicas"))


def targets(plan: dict) -> dict[int, list[int]]:
    return {p["id"]: p["replicas"] for p in plan["target"]["t"]}


def assert_every_acknowledged_record_reads_back(producer: Producer) -> None:
    assert sum(map(len, producer.acked.values())) > 0, "the producers got acknowledgements"
    for p, values in producer.acked.items():
        read = {r["value"] for r in records_consume(topic="t", partition=p)}
        assert set(values) <= read, f"t/{p} lost {sorted(set(values) - read)}"


def busiest_unstarted_target(plan: dict) -> int:
    """The new SPU most moves not started yet copy to: they cannot start while it is down."""
    started = set(PlanExecution.objects.get(plan_id=plan["id"]).started)
    waiting = [m for i, m in enumerate(plan["moves"]) if i not in started]
    return Counter(s for m in waiting for s in m["added"]).most_common(1)[0][0]


def spu_back_in_every_lrs(spu: int) -> bool:
    kick()
    rows = Partition.objects.filter(topic__name="t").values_list("replicas", "lrs")
    return all(spu in lrs for replicas, lrs in rows if spu in replicas)


def assert_leaders_balanced() -> None:
    rows = list(Partition.objects.filter(topic__name="t").values_list("leader", "replicas"))
    assert all(leader == replicas[0] for leader, replicas in rows)
    counts = Counter(leader for leader, _ in rows)
    assert max(counts.values()) - min(counts.values()) <= 1, counts


def test_a_scale_out_plan_reaches_its_target_with_producers_running(scale_out):
    producer, watch = carry_out(scale_out["id"])
    assert plan_status(plan_id=scale_out["id"])["state"] == "done"
    assert replica_lists() == targets(scale_out)
    assert_leaders_balanced()
    assert_every_acknowledged_record_reads_back(producer)
    assert watch.backwards == []


def test_a_cancel_halfway_leaves_valid_replica_sets_and_loses_nothing(scale_out):
    plan_id = scale_out["id"]

    def cancel_halfway(status: dict) -> None:
        # Two moves at a time and a cancel after two: some moves can never have started.
        if status["state"] == "running" and status["moves_done"] >= 2:
            plan_cancel(plan_id=plan_id, by="test")

    assert len(scale_out["moves"]) >= 7
    producer, watch = carry_out(plan_id, cancel_halfway, max_moves=2)
    status = plan_status(plan_id=plan_id)
    assert status["state"] == "cancelled" and status["moves_in_flight"] == 0
    assert 0 < status["moves_done"] < status["moves_total"]
    before = {m["partition"]: m["before"] for m in scale_out["moves"]}
    for p, replicas in replica_lists().items():
        assert replicas in (targets(scale_out)[p], before.get(p)), f"t/{p}: {replicas}"
    assert_every_acknowledged_record_reads_back(producer)
    assert watch.backwards == []


def test_an_spu_outage_halfway_delays_the_plan_but_it_still_reaches_its_target(scale_out):
    """After the first move, a new SPU unstarted moves copy to goes down: they wait for it."""
    plan_id, outage = scale_out["id"], {}

    def outage_halfway(status: dict) -> None:
        if "down" not in outage and status["moves_done"] >= 1:
            outage["spu"] = spu = busiest_unstarted_target(scale_out)
            spu_offline(spu_id=spu, by="test")
            outage["down"] = time.monotonic()
            outage["done_then"] = status["moves_done"]
        elif "up" not in outage and "down" in outage and time.monotonic() - outage["down"] > 2:
            spu_online(spu_id=outage["spu"], by="test")
            outage["up"] = time.monotonic()

    assert len(scale_out["moves"]) >= 7
    producer, watch = carry_out(plan_id, outage_halfway, max_moves=2)
    assert "up" in outage and outage["done_then"] < len(scale_out["moves"])
    assert plan_status(plan_id=plan_id)["state"] == "done"
    assert replica_lists() == targets(scale_out)
    assert wait_until(lambda: spu_back_in_every_lrs(outage["spu"]), 15)
    call_command("leader", "elect", "--preferred", stdout=StringIO())
    assert_leaders_balanced()
    assert_every_acknowledged_record_reads_back(producer)
    assert watch.backwards == []
