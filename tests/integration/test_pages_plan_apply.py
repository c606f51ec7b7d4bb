"""Carrying a plan out from its page, draining an SPU from its row, electing preferred leaders."""
from __future__ import annotations

import pytest

from cluster.models import Event, Partition, Spu
from cluster.services import spu_connect, spu_register
from planner.execution import plan_wait
from planner.models import Plan, PlanExecution

pytestmark = [pytest.mark.django_db, pytest.mark.redis]
# SPU 12 is registered empty in rack-a, so rebalancing the cluster as it is fills it.
REBALANCE = {"anti_affinity": "on", "leader_balance": "on", "order_optimisation": "on",
             "engine": "auto"}
APPLY = {"max_moves_per_spu": "5", "max_moves": "50", "confirm": "on"}


@pytest.fixture
def live_cluster(planned_cluster, redis_url):
    """The planned cluster with every SPU online, and SPU 12 registered in rack-a."""
    spu_register(spu_id=12, rack="rack-a")
    for spu_id in Spu.objects.values_list("id", flat=True):
        spu_connect(spu_id=spu_id)


@pytest.fixture
def plan_id(operator_client, live_cluster, no_worker) -> int:
    assert operator_client.post("/planner/plans/new/", REBALANCE).status_code == 302
    return Plan.objects.get().pk


def test_an_operator_applies_a_plan_from_its_page_and_it_runs_to_the_end(operator_client,
                                                                         plan_id):
    answer = operator_client.post(f"/planner/plans/{plan_id}/apply/", APPLY)
    assert answer.status_code == 302 and answer["Location"].endswith(f"/{plan_id}/#apply")
    assert PlanExecution.objects.get(plan_id=plan_id).state == "running"
    assert plan_wait(plan_id=plan_id, timeout_s=60)
    target = Plan.objects.get(pk=plan_id).target
    for p in Partition.objects.select_related("topic"):
        assert p.replicas == target[p.topic.name][p.index]["replicas"]
    page = operator_client.get(f"/planner/plans/{plan_id}/").content.decode()
    assert 'data-field="state">done<' in page


def test_applying_needs_the_confirmation_and_says_so_next_to_the_box(operator_client, plan_id):
    answer = operator_client.post(f"/planner/plans/{plan_id}/apply/",
                                  {**APPLY, "confirm": ""})
    assert answer.status_code == 400
    assert "Tick the box to confirm." in answer.content.decode()
    assert not PlanExecution.objects.exists()


def test_an_operator_pauses_resumes_and_cancels_from_the_page(operator_client, plan_id):
    operator_client.post(f"/planner/plans/{plan_id}/apply/", {**APPLY, "max_moves": "1"})
    for action, state in (("pause", "paused"), ("resume", "running"), ("cancel", "cancelled")):
        assert operator_client.post(f"/planner/plans/{plan_id}/{action}/").status_code == 302
        assert PlanExecution.objects.get(plan_id=plan_id).state == state


def test_a_viewer_sees_the_plan_but_cannot_apply_it(plan_id, viewer_client):  # viewer logs in last
    page = viewer_client.get(f"/planner/plans/{plan_id}/").content.decode()
    assert 'id="apply-form"' not in page
    assert viewer_client.post(f"/planner/plans/{plan_id}/apply/", APPLY).status_code == 403
    assert not PlanExecution.objects.exists()


def test_drain_from_the_spu_row_previews_every_move_then_applies_only_those(operator_client,
                                                                           live_cluster):
    assert "planner/drain/0/" in operator_client.get("/spus/").content.decode()
    held = [p.pk for p in Partition.objects.all() if 0 in p.replicas]
    bare = operator_client.post("/planner/drain/0/")
    assert bare.status_code == 302 and bare["Location"] == "/planner/drain/0/"
    preview = operator_client.get("/planner/drain/0/")
    page = preview.content.decode()
    assert page.count("<tr data-move=") == len(held) > 0
    assert not Plan.objects.exists() and not PlanExecution.objects.exists()
    expect = preview.context["form"].initial["expect"]
    answer = operator_client.post("/planner/drain/0/", {**APPLY, "expect": expect,
                                                        "throttle_bytes_per_s": "1000000"})
    assert answer.status_code == 302
    execution = PlanExecution.objects.get()
    assert answer["Location"].endswith(f"/planner/plans/{execution.plan_id}/#apply")
    assert execution.moves_total == len(held) and execution.throttle_bytes_per_s == 1_000_000
    assert plan_wait(plan_id=execution.plan_id, timeout_s=60)
    assert not [p.pk for p in Partition.objects.all() if 0 in p.replicas]


def test_a_drain_is_refused_when_the_cluster_changed_since_its_preview(operator_client,
                                                                      live_cluster):
    answer = operator_client.post("/planner/drain/0/", {**APPLY, "expect": "0" * 16},
                                  follow=True)
    assert "the cluster changed since the preview" in answer.content.decode()
    assert answer.redirect_chain[-1][0] == "/planner/drain/0/"
    assert not Plan.objects.exists() and not PlanExecution.objects.exists()


def test_elect_preferred_leaders_from_the_overview_reports_what_it_did(operator_client,
                                                                       live_cluster):
    answer = operator_client.post("/leaders/elect-preferred/", {"next": "/"}, follow=True)
    assert answer.redirect_chain[-1][0] == "/"
    assert "Preferred leaders elected for the cluster" in answer.content.decode()
    assert Event.objects.filter(operation="elect-preferred").exists()


def test_a_viewer_cannot_elect_leaders_or_drain(viewer_client, live_cluster):
    assert viewer_client.post("/leaders/elect-preferred/").status_code == 403
    assert viewer_client.post("/planner/drain/0/").status_code == 403
    assert not Event.objects.filter(operation="elect-preferred").exists()


def test_metrics_count_the_moves_an_applied_plan_has_in_flight(operator_client, plan_id):
    from cluster.services.replication import replication_tick
    from tests.integration.test_metrics_endpoint import sample, scrape

    assert sample(scrape(operator_client), "controlroom_plan_moves_in_flight") == 0
    operator_client.post(f"/planner/plans/{plan_id}/apply/", APPLY)
    replication_tick(dispatch=lambda followups: None)  # the tick starts the first moves
    in_flight = len(PlanExecution.objects.get(plan_id=plan_id).in_flight)
    assert in_flight > 0
    assert sample(scrape(operator_client), "controlroom_plan_moves_in_flight") == in_flight
