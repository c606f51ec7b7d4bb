"""`plan apply|status|pause|resume|cancel`: a stored plan carried out in-process (no worker)."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from cluster.models import Event, Partition, Topic
from planner.models import Plan, PlanExecution
from tests.helpers import refused, register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def quiet(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def status(plan_id: int) -> dict:
    return json.loads(run("plan", "status", str(plan_id), "--json"))


def replica_map() -> dict[int, list[int]]:
    return dict(Partition.objects.filter(topic__name="t").values_list("index", "replicas"))


@pytest.fixture
def scale_out(redis_url):
    """Twelve partitions on SPUs 0-3; SPUs 4 and 5 just joined, empty; a plan onto them."""
    register_spus(0, 1, 2, 3, online=True)
    run("topic", "create", "t", "--partitions", "12", "--replication", "2")
    run("produce", "t", "--partition", "0", "--count", "5", "--acks", "all")
    register_spus(4, 5, online=True)
    plan = json.loads(quiet("plan", "rebalance", "--json"))
    assert plan["moves"], "the plan moves replicas onto the new SPUs"
    return plan


def target_of(plan: dict) -> dict[int, list[int]]:
    return {p["id"]: p["replicas"] for p in plan["target"]["t"]}


def test_apply_wait_without_a_worker_moves_every_partition_to_its_target(scale_out):
    result = json.loads(quiet("plan", "apply", str(scale_out["id"]), "--wait", "--json"))
    assert result["state"] == "done"
    assert result["moves_done"] == result["moves_total"] == len(scale_out["moves"])
    assert result["moves_in_flight"] == 0 and result["finished_at"] is not None
    assert replica_map() == target_of(scale_out)
    assert Topic.objects.get(name="t").replica_map == [target_of(scale_out)[p] for p in range(12)]
    assert {r["leader"] for r in json.loads(run("partition", "list", "--json"))} >= {4, 5}


def test_status_has_the_issue_keys_and_a_plan_not_applied_is_pending(scale_out):
    s = status(scale_out["id"])
    assert set(s) >= {"id", "state", "moves_total", "moves_done", "moves_in_flight",
                      "bytes_moved", "started_at", "finished_at", "reason"}
    assert (s["state"], s["moves_done"], s["started_at"]) == ("pending", 0, None)


def test_bytes_moved_counts_the_records_copied_to_new_replicas(scale_out, settings):
    settings.REPLICATION_RECORD_BYTES = 100
    quiet("plan", "apply", str(scale_out["id"]), "--wait")
    moved_p0 = [m for m in scale_out["moves"] if m["partition"] == 0]
    expected = sum(5 * len(m["added"]) * 100 for m in moved_p0)
    assert status(scale_out["id"])["bytes_moved"] == expected


def test_a_plan_whose_current_layout_changed_is_refused_and_nothing_changes(scale_out):
    run("topic", "delete", "t")
    error = refused("plan", "apply", str(scale_out["id"]))
    assert "no longer matches the cluster" in str(error)
    assert not PlanExecution.objects.exists()


def test_a_plan_moving_to_an_offline_spu_is_refused_and_nothing_changes(scale_out):
    run("spu", "offline", "4")
    before = replica_map()
    assert "SPU 4 is not online" in str(refused("plan", "apply", str(scale_out["id"])))
    assert not PlanExecution.objects.exists() and replica_map() == before


def test_a_plan_naming_an_unregistered_spu_is_refused(redis_url):
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "--partitions", "6", "--replication", "2")
    plan = json.loads(quiet("plan", "rebalance", "--add-spu", "9", "--json"))
    assert "SPU 9 is not registered" in str(refused("plan", "apply", str(plan["id"])))


def test_bad_throttle_values_and_unknown_plans_exit_2(scale_out):
    refused("plan", "apply", str(scale_out["id"]), "--max-moves-per-spu", "0")
    refused("plan", "apply", "999")
    refused("plan", "status", "999")
    assert not PlanExecution.objects.exists()


def test_a_plan_applies_once(scale_out):
    quiet("plan", "apply", str(scale_out["id"]), "--wait")
    assert "already applied" in str(refused("plan", "apply", str(scale_out["id"])))


def test_the_throttle_caps_moves_in_flight_per_spu_and_in_total(scale_out):
    from cluster.services.replication import replication_tick
    from cluster.services.waiting import LocalQueue

    quiet("plan", "apply", str(scale_out["id"]), "--max-moves-per-spu", "1", "--max-moves", "2")
    replication_tick(dispatch=LocalQueue())
    e = PlanExecution.objects.get()
    flying = [scale_out["moves"][i] for i in e.in_flight]
    assert 1 <= len(flying) <= 2
    loads: dict[int, int] = {}
    for m in flying:
        for s in set(m["before"]) ^ set(m["after"]):
            loads[s] = loads.get(s, 0) + 1
    assert max(loads.values()) == 1


def test_pause_stops_new_moves_and_resume_finishes_the_plan(scale_out):
    from cluster.services.waiting import LocalQueue
    from cluster.services.replication import replication_tick
    from planner.execution import plan_wait

    plan_id = str(scale_out["id"])
    quiet("plan", "apply", plan_id, "--max-moves", "1")
    assert status(int(plan_id))["state"] == "running"
    replication_tick(dispatch=LocalQueue())
    assert json.loads(quiet("plan", "pause", plan_id, "--json"))["state"] == "paused"
    for _ in range(8):
        replication_tick(dispatch=LocalQueue())
    paused = PlanExecution.objects.get()
    assert paused.state == "paused" and len(paused.started) == 1 and paused.in_flight == []
    quiet("plan", "resume", plan_id)
    assert plan_wait(plan_id=int(plan_id), timeout_s=120)
    assert status(int(plan_id))["state"] == "done" and replica_map() == target_of(scale_out)


def test_cancel_leaves_valid_replica_sets_and_starts_nothing_new(scale_out):
    from cluster.services.replication import replication_tick
    from cluster.services.waiting import LocalQueue
    from planner.execution import plan_wait

    plan_id = scale_out["id"]
    quiet("plan", "apply", str(plan_id), "--max-moves", "2")
    replication_tick(dispatch=LocalQueue())
    quiet("plan", "cancel", str(plan_id))
    assert plan_wait(plan_id=plan_id, timeout_s=60)
    s = status(plan_id)
    assert s["state"] == "cancelled" and s["moves_in_flight"] == 0
    assert len(PlanExecution.objects.get().started) == 2
    targets = target_of(scale_out)
    befores = {m["partition"]: m["before"] for m in scale_out["moves"]}
    for p, replicas in replica_map().items():
        assert replicas in (targets[p], befores.get(p, targets[p])), f"t/{p}: {replicas}"
    assert "cannot be paused" in str(refused("plan", "pause", str(plan_id)))


def test_moves_are_logged_as_events(scale_out):
    quiet("plan", "apply", str(scale_out["id"]), "--wait")
    assert Event.objects.filter(operation="move-complete").count() == len(scale_out["moves"])
    assert Event.objects.filter(object_type="plan", operation="done").exists()


def test_spu_drain_wait_leaves_the_spu_without_replicas_so_it_can_be_unregistered(redis_url):
    register_spus(0, 1, 2, 3, online=True)
    run("topic", "create", "t", "--partitions", "8", "--replication", "2")
    run("produce", "t", "--partition", "0", "--count", "3", "--acks", "all")
    assert any(2 in r for r in replica_map().values())
    result = json.loads(quiet("spu", "drain", "2", "--wait", "--json"))
    assert result["state"] == "done" and result["moves_done"] == result["moves_total"] > 0
    assert not any(2 in r for r in replica_map().values())
    assert all(len(r) == 2 for r in replica_map().values())
    assert Plan.objects.get(pk=result["id"]).scenario["remove_spus"] == [2]
    run("spu", "unregister", "2")


def test_draining_an_unknown_spu_exits_2(redis_url):
    register_spus(0, 1, online=True)
    assert "not registered" in str(refused("spu", "drain", "7"))


def test_progress_is_announced_to_the_cluster_group_as_plan_progress(scale_out, settings,
                                                                      monkeypatch):
    import time

    from planner import live

    sent: list[tuple[str, dict]] = []
    monkeypatch.setattr(live._progress, "send", lambda group, p: sent.append((group, p)))
    settings.LIVE_UPDATES = True
    quiet("plan", "apply", str(scale_out["id"]), "--wait")
    on_cluster = lambda: [p for g, p in sent if g == "cluster"]  # noqa: E731
    deadline = time.monotonic() + 10  # sent off the tick's thread, a window apart
    while not (on_cluster() and on_cluster()[-1]["state"] == "done") \
            and time.monotonic() < deadline:
        time.sleep(0.02)
    assert {g for g, _ in sent} == {"cluster", f"plan-{scale_out['id']}"}
    assert {p["type"] for _, p in sent} == {"plan.progress"}
    last = on_cluster()[-1]
    assert set(last) == {"type", "plan", "state", "moves_total", "moves_done",
                         "moves_in_flight"}
    assert (last["plan"], last["state"], last["moves_in_flight"]) == (scale_out["id"], "done", 0)
    assert last["moves_done"] == last["moves_total"] == len(scale_out["moves"])


def test_moves_onto_an_spu_that_went_down_wait_unstarted_until_it_is_back(scale_out):
    from cluster.services.waiting import LocalQueue
    from cluster.services.replication import replication_tick
    from planner.execution import plan_wait

    plan_id = scale_out["id"]
    quiet("plan", "apply", str(plan_id))
    run("spu", "offline", "4")
    for _ in range(6):
        replication_tick(dispatch=LocalQueue())
    e = PlanExecution.objects.get()
    onto_4 = {i for i, m in enumerate(scale_out["moves"]) if 4 in m["added"]}
    assert onto_4 and not onto_4 & set(e.started) and e.state == "running"
    run("spu", "online", "4")
    assert plan_wait(plan_id=plan_id, timeout_s=120)
    assert status(plan_id)["state"] == "done" and replica_map() == target_of(scale_out)
