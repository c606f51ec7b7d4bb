"""Around carrying a plan out (issue 19, items 7, 9, 10 and 12): a second tab's apply,
the rollback file, the rest of a cancelled plan, plans that add SPUs, the byte-rate
throttle and the drain's dry run."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from cluster.services.waiting import LocalQueue, wait_until
from cluster.models import Partition, Spu
from cluster.services.replication import replication_tick
from planner.execution import plan_apply, plan_cancel, plan_status, plan_wait
from planner.models import Plan, PlanExecution
from tests.helpers import refused, register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]
APPLY = {"max_moves_per_spu": "5", "max_moves": "50", "confirm": "on"}


def quiet(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def layout() -> dict[tuple[str, int], list[int]]:
    return {(t, i): r for t, i, r in
            Partition.objects.values_list("topic__name", "index", "replicas")}


@pytest.fixture
def grown(redis_url) -> dict:
    """Six partitions of RF 2 on SPUs 0-2, 5 records each; SPU 3 joined; a plan onto it."""
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "--partitions", "6", "--replication", "2")
    for p in range(6):
        run("produce", "t", "--partition", str(p), "--count", "5", "--acks", "all")
    register_spus(3, online=True)
    return json.loads(quiet("plan", "rebalance", "--json"))


def test_a_second_tab_applying_a_running_plan_is_redirected_with_a_message(grown,
                                                                        operator_client):
    plan_apply(plan_id=grown["id"], by="another tab")
    answer = operator_client.post(f"/planner/plans/{grown['id']}/apply/", APPLY)
    assert answer.status_code == 302 and answer["Location"].endswith(f"/{grown['id']}/#apply")
    page = operator_client.get(answer["Location"]).content.decode()
    assert f"plan {grown['id']} was already applied (running)" in page


def test_the_rollback_file_is_todays_assignment_of_every_partition_the_plan_moves(
        grown, operator_client):
    page = operator_client.get(f"/planner/plans/{grown['id']}/").content.decode()
    assert f"/planner/plans/{grown['id']}/rollback.json" in page
    document = json.loads(operator_client.get(
        f"/planner/plans/{grown['id']}/rollback.json").content)
    now = layout()
    assert document["version"] == 1
    assert [(r["topic"], r["partition"]) for r in document["partitions"]] == \
        sorted((m["topic"], m["partition"]) for m in grown["moves"])
    for row in document["partitions"]:
        assert row["replicas"] == now[(row["topic"], row["partition"])]
        assert row["log_dirs"] == ["any"] * len(row["replicas"])


def test_a_cancelled_plan_shows_moves_not_started_and_plans_the_rest_from_the_cluster_now(
        grown, operator_client):
    plan_id = grown["id"]
    plan_apply(plan_id=plan_id, max_moves=1, by="test")
    assert wait_until(lambda: PlanExecution.objects.get().moves_done >= 1, timeout_s=60)
    plan_cancel(plan_id=plan_id, by="test")
    assert plan_wait(plan_id=plan_id, timeout_s=60)
    page = operator_client.get(f"/planner/plans/{plan_id}/").content.decode()
    assert ">not started<" in page and ">waiting<" not in page
    assert 'id="plan-rest"' in page
    answer = operator_client.post(f"/planner/plans/{plan_id}/rest/")
    rest = Plan.objects.exclude(pk=plan_id).get()
    assert answer["Location"] == f"/planner/plans/{rest.pk}/"
    now = layout()
    assert all(m["before"] == now[(m["topic"], m["partition"])] for m in rest.moves)
    assert len(rest.moves) < len(grown["moves"])
    again = operator_client.post(f"/planner/plans/{rest.pk}/rest/", follow=True)
    assert "only a cancelled or failed plan has a rest to plan" in again.content.decode()


def test_a_plan_that_adds_spus_walks_the_operator_through_register_online_apply(
        redis_url, operator_client):
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "--partitions", "6", "--replication", "2")
    plan = json.loads(quiet("plan", "rebalance", "--add-spu", "7:rack-z", "--json"))
    url = f"/planner/plans/{plan['id']}/"
    page = operator_client.get(url).content.decode()
    assert 'id="add-spus"' in page and "SPU 7 in rack-z" in page and 'id="register-spus"' in page
    refusal = str(refused("plan", "apply", str(plan["id"]), code=2))
    assert "spu register --id 7 --rack rack-z, then spu online 7, then apply again" in refusal
    operator_client.post(url + "register-spus/")
    assert Spu.objects.get(pk=7).rack == "rack-z"
    page = operator_client.get(url).content.decode()
    assert 'id="register-spus"' not in page and 'id="online-spus"' in page
    operator_client.post(url + "online-spus/")
    assert 'id="add-spus"' not in operator_client.get(url).content.decode()
    applied = operator_client.post(url + "apply/", APPLY)
    assert applied.status_code == 302
    assert PlanExecution.objects.get(plan_id=plan["id"]).state == "running"


def test_the_byte_throttle_starts_moves_only_as_fast_as_the_rate_pays(grown, settings):
    settings.REPLICATION_RECORD_BYTES = 100  # every move copies 5 records: 500 bytes
    status = json.loads(quiet("plan", "apply", str(grown["id"]), "--throttle-bytes-per-s",
                              "1000", "--json"))
    assert status["throttle_bytes_per_s"] == 1000
    t0 = PlanExecution.objects.get().throttle_at_ms
    started = []
    for at in (t0, t0 + 100, t0 + 600):
        replication_tick(now=at, dispatch=LocalQueue())
        started.append(len(PlanExecution.objects.get().started))
    assert started == [2, 2, 3], "a burst of 1,000 bytes, then 500 bytes each half second"
    for step in range(1, 30):
        if PlanExecution.objects.get().moves_done:
            break
        replication_tick(now=t0 + 600 + step * 10, dispatch=LocalQueue())
    running = plan_status(plan_id=grown["id"])
    assert running["state"] == "running" and running["moves_done"] >= 1
    assert running["eta_s"] > 0 and running["estimated_finish_at"] is not None
    assert running["bytes_copied"] > 0
    assert plan_wait(plan_id=grown["id"], timeout_s=120)
    done = plan_status(plan_id=grown["id"])
    assert done["state"] == "done" and done["bytes_copied"] == done["bytes_moved"] > 0
    assert done["bytes_per_s"] is not None and done["bytes_per_s"] > 0


def test_bad_byte_throttles_are_refused_everywhere_and_nothing_starts(grown, api):
    refused("plan", "apply", str(grown["id"]), "--throttle-bytes-per-s", "0")
    answer = api.post(f"/api/plans/{grown['id']}/apply/", {"throttle_bytes_per_s": -5},
                      format="json")
    assert answer.status_code == 400 and "throttle_bytes_per_s" in answer.json()["error"]
    assert not PlanExecution.objects.exists()
    applied = api.post(f"/api/plans/{grown['id']}/apply/", {"throttle_bytes_per_s": 4096},
                       format="json")
    assert applied.status_code == 200 and applied.json()["throttle_bytes_per_s"] == 4096


def test_spu_drain_dry_run_lists_exactly_the_spus_replicas_and_stores_nothing(grown):
    held = [key for key, replicas in layout().items() if 1 in replicas]
    preview = json.loads(run("spu", "drain", "1", "--dry-run", "--json"))
    assert preview["dry_run"] is True and preview["replicas"] == len(held)
    assert sorted((m["topic"], m["partition"]) for m in preview["moves"]) == sorted(held)
    assert all(m["removed"] == [1] and len(m["added"]) == 1 for m in preview["moves"])
    assert Plan.objects.count() == 1 and not PlanExecution.objects.exists()
    assert "dry run, nothing changed" in run("spu", "drain", "1", "--dry-run")
    assert "not registered" in str(refused("spu", "drain", "9", "--dry-run"))


def test_spu_drain_applies_only_those_moves_with_the_throttle_given(grown):
    held = {key for key, replicas in layout().items() if 1 in replicas}
    before = layout()
    result = json.loads(quiet("spu", "drain", "1", "--throttle-bytes-per-s", "1000000",
                              "--wait", "--json"))
    assert result["state"] == "done" and result["moves_total"] == len(held)
    assert result["throttle_bytes_per_s"] == 1_000_000
    after = layout()
    assert {k for k in after if after[k] != before[k]} == held
    assert not any(1 in replicas for replicas in after.values())


def test_plan_export_writes_the_rollback_file(grown, tmp_path):
    quiet("plan", "export", str(grown["id"]), "--rollback", str(tmp_path / "rollback.json"))
    document = json.loads((tmp_path / "rollback.json").read_text())
    now = layout()
    assert len(document["partitions"]) == len(grown["moves"])
    assert all(r["replicas"] == now[(r["topic"], r["partition"])]
               for r in document["partitions"])
    assert "cannot write" in str(refused("plan", "export", str(grown["id"]), "--rollback",
                                         str(tmp_path / "missing" / "r.json")))


def test_a_viewer_reads_the_drain_preview_but_cannot_drain_or_prepare_or_replan(
        grown, viewer_client):
    preview = viewer_client.get("/planner/drain/1/")
    assert preview.status_code == 200 and 'id="drain-form"' not in preview.content.decode()
    for url, body in (("/planner/drain/1/", {**APPLY, "expect": "x"}),
                      (f"/planner/plans/{grown['id']}/register-spus/", {}),
                      (f"/planner/plans/{grown['id']}/online-spus/", {}),
                      (f"/planner/plans/{grown['id']}/rest/", {})):
        assert viewer_client.post(url, body).status_code == 403, url
    assert Plan.objects.count() == 1 and not PlanExecution.objects.exists()


def test_a_bad_byte_throttle_on_the_page_is_shown_next_to_its_field(grown, operator_client):
    for page, body in ((f"/planner/plans/{grown['id']}/apply/", APPLY),
                       ("/planner/drain/1/", {**APPLY, "expect": "x"})):
        answer = operator_client.post(page, {**body, "throttle_bytes_per_s": "0"})
        assert answer.status_code == 400
        assert 'id="id_throttle_bytes_per_s-error"' in answer.content.decode()
    assert Plan.objects.count() == 1 and not PlanExecution.objects.exists()
