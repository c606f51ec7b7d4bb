"""Issue 36 item 2 and issue 35 item 5: every move ends within its timeout whatever it
waits on, a plan with a failed move finishes as failed, self-healing goes on, and planning
works while a move is in flight. Time is the ticks' clock (``replication_tick(now=...)``),
never a wall-clock sleep."""
from __future__ import annotations

import json

import pytest

from cluster.engine.unit import now_ms
from cluster.models import Partition
from cluster.services.network import CutRequest, net_cut
from cluster.services.outages import spu_offline
from cluster.services.replication import replication_tick
from cluster.services.waiting import LocalQueue
from healing.services import healing_check, healing_enable, healing_set
from planner.drain import plan_drain
from planner.execution import plan_apply
from planner.models import Plan, PlanExecution
from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]
TIMEOUT_MS = 5_000
STEP_MS = 250


def tick(now: int) -> None:
    replication_tick(now=now, dispatch=LocalQueue())


@pytest.fixture
def moving(redis_url, settings) -> dict:
    """One partition of RF 3 on SPUs 0-3 with records; the drain of a follower applied (its
    move starts at the tick at ``t0``). The commands above ran the ticks at wall-clock time:
    the test's clock goes on from there."""
    settings.PLAN_MOVE_TIMEOUT_MS = TIMEOUT_MS
    register_spus(0, 1, 2, 3, online=True)
    run("topic", "create", "t", "--partitions", "1", "--replication", "3")
    run("produce", "t", "--partition", "0", "--count", "20", "--acks", "all")
    t0 = now_ms() + 1_000
    tick(t0 - 500)
    row = Partition.objects.get(topic__name="t", index=0)
    drained = next(s for s in row.replicas if s != row.leader)
    plan = plan_drain(spu_id=drained, by="test")
    (move,) = plan.moves
    plan_apply(plan_id=plan.pk, by="test")
    return {"t0": t0, "plan": plan.pk, "leader": row.leader, "before": move["before"],
            "after": move["after"], "added": move["added"][0]}


def start(moving: dict) -> None:
    tick(moving["t0"])
    assert PlanExecution.objects.get().in_flight == [0], "the move is in flight"


def ticks_until_the_plan_ends(since: int, limit_ms: int) -> int:
    """The tick clock when the execution ended; fails past ``limit_ms`` after ``since``."""
    now = since
    while now <= since + limit_ms:
        now += STEP_MS
        tick(now)
        if PlanExecution.objects.get().finished_at is not None:
            return now
    raise AssertionError(f"the plan still runs {limit_ms} ms on: "
                         f"{PlanExecution.objects.values().get()}")


def test_a_move_whose_kept_leader_goes_offline_ends_within_its_timeout_and_healing_goes_on(
        moving):
    start(moving)
    kept = moving["leader"]
    assert kept in moving["after"] and kept in moving["before"]
    spu_offline(spu_id=kept, by="test")
    healing_enable(by="test")
    healing_set(name="spu_down_alert_after_s", value="1", by="test")
    healing_set(name="spu_down_heal_after_s", value="1", by="test")
    healing_check(now_ms=moving["t0"])
    ended = ticks_until_the_plan_ends(moving["t0"], TIMEOUT_MS + 4 * STEP_MS)
    e = PlanExecution.objects.get()
    assert (e.state, e.moves_done, e.moves_failed, e.in_flight) == ("failed", 0, 1, [])
    assert e.reason == f"t/0: rolled back (kept replica SPU {kept} offline)"
    replicas = Partition.objects.get(topic__name="t", index=0).replicas
    assert len(replicas) == 3, "the move ended: no replica of it is left over"
    # Self-healing is no longer held by the plan: it plans the down SPU's replicas away.
    outcome = healing_check(now_ms=ended + 2_000)
    assert "being carried out" not in outcome["waiting"]
    assert outcome["planned"] is not None, outcome


def test_a_move_whose_new_replica_is_cut_from_its_leader_ends_within_its_timeout(moving):
    net_cut(request=CutRequest(spu=moving["added"], source="spu", peer=moving["leader"]),
            by="test")
    start(moving)
    ticks_until_the_plan_ends(moving["t0"], TIMEOUT_MS + 4 * STEP_MS)
    e = PlanExecution.objects.get()
    assert (e.state, e.moves_failed) == ("failed", 1)
    assert Partition.objects.get(topic__name="t", index=0).replicas == moving["before"]
    assert e.reason == (f"t/0: rolled back (new replica SPU {moving['added']} cut from "
                        f"leader SPU {moving['leader']})")


def test_a_move_not_started_for_its_new_spu_being_down_fails_at_the_timeout(moving):
    spu_offline(spu_id=moving["added"], by="test")
    tick(moving["t0"])
    assert PlanExecution.objects.get().in_flight == [], "it waits, unstarted"
    ticks_until_the_plan_ends(moving["t0"], TIMEOUT_MS + 4 * STEP_MS)
    e = PlanExecution.objects.get()
    assert (e.state, e.moves_failed, e.started) == ("failed", 1, [0])
    assert e.reason.startswith(f"t/0: not started: new replica SPU {moving['added']} offline")


def test_planning_works_while_a_move_is_in_flight_and_plans_from_its_target(moving):
    start(moving)
    assert len(Partition.objects.get(topic__name="t", index=0).replicas) == 4, "mid-move"
    plan = json.loads(run("plan", "rebalance", "--remove-spu", str(moving["leader"]),
                          "--json"))
    stored = Plan.objects.get(pk=plan["id"]).current
    current = {p["id"]: p["replicas"] for p in stored["topics"][0]["partitions"]}
    assert current == {0: moving["after"]}, "planned from where the move goes"
    assert moving["leader"] not in plan["target"]["t"][0]
    assert Plan.objects.count() == 2
