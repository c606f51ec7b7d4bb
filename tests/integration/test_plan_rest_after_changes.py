"""Issue 35 item 5: "plan the rest" of a cancelled plan once the plan's SPUs changed (one
drained and unregistered) while another plan moves a partition: planned from the cluster as
it is (a partition under way at its move's target), and what blocks it said precisely."""
from __future__ import annotations

import json

import pytest

from cluster.engine.unit import now_ms
from cluster.errors import Conflict, InvalidInput
from cluster.models import Partition, Topic
from cluster.services.replication import replication_tick
from cluster.services.waiting import LocalQueue, wait_until
from planner.drain import spu_drain
from planner.execution import plan_apply, plan_cancel, plan_wait
from planner.follow_up import plan_rest
from planner.models import Plan, PlanExecution
from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


@pytest.fixture
def cancelled(redis_url) -> int:
    """payments (6 partitions, RF 3) on SPUs 0-5; a plan removing SPUs 4 and 5 cancelled
    after its first move; then SPU 5 drained and unregistered."""
    register_spus(0, 1, 2, 3, 4, 5, online=True)
    run("topic", "create", "payments", "--partitions", "6", "--replication", "3")
    for p in range(6):
        run("produce", "payments", "--partition", str(p), "--count", "5", "--acks", "all")
    plan = json.loads(run("plan", "rebalance", "--remove-spu", "4", "--remove-spu", "5",
                          "--json"))
    plan_apply(plan_id=plan["id"], max_moves=1, by="test")
    assert wait_until(lambda: PlanExecution.objects.get().moves_done >= 1, timeout_s=60)
    plan_cancel(plan_id=plan["id"], by="test")
    assert plan_wait(plan_id=plan["id"], timeout_s=60)
    drain = spu_drain(spu_id=5, by="test")
    assert plan_wait(plan_id=drain.plan_id, timeout_s=60)
    run("spu", "unregister", "5")
    return plan["id"]


def test_the_rest_is_planned_while_another_plan_moves_a_partition(cancelled):
    other = spu_drain(spu_id=3, max_moves=1, by="test")
    replication_tick(now=now_ms(), dispatch=LocalQueue())
    (index,) = PlanExecution.objects.get(plan_id=other.plan_id).in_flight
    moving = other.plan.moves[index]
    row = Partition.objects.get(topic__name="payments", index=moving["partition"])
    assert len(row.replicas) == 4, "old and new replicas together while it moves"
    rest = plan_rest(plan_id=cancelled, by="test")
    assert rest.scenario["remove_spus"] == [4]
    planned = {p["id"]: p["replicas"] for p in rest.current["topics"][0]["partitions"]}
    assert planned[moving["partition"]] == moving["after"]
    assert all(4 not in m["after"] and 5 not in m["after"] for m in rest.moves)


def test_a_partition_left_with_another_replica_count_is_named_with_its_count(cancelled):
    topic = Topic.objects.get(name="payments")
    replica_map = [list(r) for r in topic.replica_map]
    spare = next(s for s in range(5) if s not in replica_map[2])
    replica_map[2].append(spare)
    Topic.objects.filter(pk=topic.pk).update(replica_map=replica_map)
    with pytest.raises(InvalidInput) as refused:
        plan_rest(plan_id=cancelled, by="test")
    assert str(refused.value.message).startswith(
        f"topic payments partition 2 has 4 replicas {replica_map[2]} where its other "
        "partitions have 3")
    assert Plan.objects.count() == 2


def test_the_rest_of_a_drain_whose_spu_is_gone_says_nothing_is_left(redis_url):
    register_spus(0, 1, 2, 3, online=True)
    run("topic", "create", "orders", "--partitions", "4", "--replication", "2")
    drain = spu_drain(spu_id=3, max_moves=1, by="test")
    replication_tick(now=now_ms(), dispatch=LocalQueue())
    plan_cancel(plan_id=drain.plan_id, by="test")
    assert plan_wait(plan_id=drain.plan_id, timeout_s=60)
    again = spu_drain(spu_id=3, by="test")
    assert plan_wait(plan_id=again.plan_id, timeout_s=60)
    run("spu", "unregister", "3")
    with pytest.raises(Conflict) as refused:
        plan_rest(plan_id=drain.plan_id, by="test")
    assert refused.value.message == (
        f"plan {drain.plan_id} drained SPU 3, which is no longer registered (it held no "
        "replica when it was unregistered): nothing of this drain is left to plan")
