"""/api/plans/: operators plan what-ifs and grids, everyone reads them, viewers change nothing."""
from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from planner.models import Plan, PlanGrid

pytestmark = pytest.mark.django_db
STATUS_KEYS = {"id", "state", "moves_total", "moves_done", "moves_in_flight", "bytes_moved",
               "started_at", "finished_at", "reason"}


def _plan(api, **body):
    return api.post("/api/plans/", {"add_spu": ["12:rack-a"], **body}, format="json")


def test_without_a_worker_a_what_if_is_planned_at_once_and_answers_id_and_state(
        api, planned_cluster, no_worker):
    answer = _plan(api)
    assert answer.status_code == 201
    body = answer.json()
    assert STATUS_KEYS <= set(body)
    assert body["state"] == "pending" and body["moves_total"] > 0
    record = Plan.objects.get(pk=body["id"])
    assert record.scenario["add_spus"] == [{"id": 12, "rack": "rack-a", "weight": 1.0}]
    assert body["moves_total"] == len(record.moves)


def test_the_detail_has_status_metrics_with_lower_bound_and_paged_moves(
        api, planned_cluster, no_worker):
    plan_id = _plan(api).json()["id"]
    body = api.get(f"/api/plans/{plan_id}/?limit=2").json()
    assert STATUS_KEYS <= set(body)
    assert body["metrics"]["lower_bound"] <= body["metrics"]["replicas_moved"]
    assert "replica_spread" in body["before"]
    assert body["moves"]["count"] == body["moves_total"]
    assert len(body["moves"]["results"]) == 2 and body["moves"]["next"]


def test_moves_filter_by_topic_and_by_spu(api, planned_cluster, no_worker):
    plan_id = _plan(api).json()["id"]
    record = Plan.objects.get(pk=plan_id)
    by_topic = api.get(f"/api/plans/{plan_id}/?topic=clicks&limit=1000").json()["moves"]
    assert by_topic["count"] == sum(m["topic"] == "clicks" for m in record.moves)
    assert all(m["topic"] == "clicks" for m in by_topic["results"])
    by_spu = api.get(f"/api/plans/{plan_id}/?spu=12&limit=1000").json()["moves"]
    assert by_spu["count"] == sum(12 in m["after"] for m in record.moves) > 0


def test_the_options_and_engine_are_those_of_plan_rebalance(api, planned_cluster, no_worker):
    body = _plan(api, anti_affinity=False, leader_balance=False, order_optimisation=False,
                 engine="local").json()
    record = Plan.objects.get(pk=body["id"])
    assert record.options == {"anti_affinity": False, "balance_leaders": False,
                              "optimise_order": False}
    assert record.engine == "local"


@pytest.mark.parametrize("body, field", [
    ({"add_spu": ["x:rack-a"]}, "add_spu"),
    ({"remove_spu": [99]}, None),
    ({"lose_rack": ["rack-z"]}, None),
    ({"replication": ["orders:0"]}, "replication"),
    ({"engine": "gpu"}, "engine"),
    ({"add_spu": ["3:rack-a"]}, None),
])
def test_bad_input_answers_400_with_the_reason_and_stores_nothing(api, planned_cluster,
                                                                  no_worker, body, field):
    answer = api.post("/api/plans/", body, format="json")
    assert answer.status_code == 400
    assert set(answer.json()) >= {"error", "details"} and answer.json()["error"]
    assert Plan.objects.count() == 0


def test_with_a_worker_the_plan_is_queued_then_the_task_computes_it(
        api, planned_cluster, queued, django_capture_on_commit_callbacks):
    from planner.tasks import compute_plan

    with django_capture_on_commit_callbacks(execute=True):
        answer = _plan(api)
    assert answer.status_code == 202
    body = answer.json()
    assert body["state"] == "computing" and body["moves_total"] == 0
    assert queued == [("planner.tasks.compute_plan", body["id"])]
    assert compute_plan(body["id"]) == "pending"
    done = api.get(f"/api/plans/{body['id']}/").json()
    assert done["state"] == "pending" and done["moves_total"] > 0
    assert done["progress"]["fraction"] == 1.0


def test_a_plan_being_computed_can_be_cancelled_and_the_task_then_stores_nothing(
        api, planned_cluster, queued):
    from planner.tasks import compute_plan

    plan_id = _plan(api).json()["id"]
    answer = api.post(f"/api/plans/{plan_id}/cancel/")
    assert answer.status_code == 200 and answer.json()["state"] == "cancelled"
    assert "cancelled by op" in answer.json()["reason"]
    assert compute_plan(plan_id) == "cancelled"
    assert Plan.objects.get(pk=plan_id).moves == []


def test_a_computed_plan_cannot_be_cancelled_here(api, planned_cluster, no_worker):
    plan_id = _plan(api).json()["id"]
    answer = api.post(f"/api/plans/{plan_id}/cancel/")
    assert answer.status_code == 409
    assert "only a plan being computed" in answer.json()["error"]
    assert Plan.objects.get(pk=plan_id).state == "pending"


def test_an_unknown_plan_is_404_json(api, db):
    answer = api.get("/api/plans/999/")
    assert answer.status_code == 404 and "error" in answer.json()


def test_plans_are_listed_newest_first_with_who_made_them(api, planned_cluster, no_worker):
    first, second = _plan(api).json()["id"], _plan(api, add_spu=["13:rack-b"]).json()["id"]
    rows = api.get("/api/plans/").json()["results"]
    assert [r["id"] for r in rows] == [second, first]
    assert {r["created_by"] for r in rows} == {"op"}


def test_a_grid_has_one_row_per_scenario_with_kafka_generate_cost(api, planned_cluster,
                                                                  no_worker):
    answer = api.post("/api/plans/grids/", {"scenarios": [
        {"add_spu": ["12:rack-a"]}, {"remove_spu": [4]}, {"lose_rack": ["rack-z"]}]},
        format="json")
    assert answer.status_code == 201
    rows = answer.json()["rows"]
    assert [r["scenario"] for r in rows] == ["add 12@rack-a", "remove 4", "lose rack-z"]
    assert rows[0]["kafka"]["replicas_moved"] > rows[0]["replicas_moved"]
    assert rows[2]["error"] and rows[2]["kafka"] is None


def test_the_standard_grid_covers_removals_rack_losses_and_growth(api, planned_cluster,
                                                                  no_worker):
    body = api.post("/api/plans/grids/", {"up_to": 1}, format="json").json()
    assert len(body["rows"]) == 12 + 4 + 4
    assert PlanGrid.objects.get(pk=body["id"]).state == "done"


def test_a_viewer_reads_plans_and_is_refused_every_write(viewer, api, planned_cluster,
                                                         no_worker, queued):
    plan_id = _plan(api).json()["id"]
    grid_id = api.post("/api/plans/grids/", {"up_to": 0}, format="json").json()["id"]
    client = APIClient()
    client.force_authenticate(viewer)
    assert client.get("/api/plans/").status_code == 200
    assert client.get(f"/api/plans/{plan_id}/").status_code == 200
    before = (Plan.objects.count(), PlanGrid.objects.count(),
              list(Plan.objects.values_list("state", flat=True)))
    for path in ("/api/plans/", f"/api/plans/{plan_id}/cancel/", "/api/plans/grids/",
                 f"/api/plans/grids/{grid_id}/cancel/"):
        answer = client.post(path, {"add_spu": ["12:rack-a"]}, format="json")
        assert answer.status_code == 403, path
        assert answer.json()["error"]
    assert (Plan.objects.count(), PlanGrid.objects.count(),
            list(Plan.objects.values_list("state", flat=True))) == before


def test_a_grid_being_computed_can_be_cancelled_and_then_gets_no_rows(api, planned_cluster,
                                                                     queued):
    from planner.tasks import compute_grid

    body = api.post("/api/plans/grids/", {"up_to": 1}, format="json").json()
    assert body["state"] == "computing" and body["rows"] == []
    answer = api.post(f"/api/plans/grids/{body['id']}/cancel/")
    assert answer.status_code == 200 and answer.json()["state"] == "cancelled"
    assert compute_grid(body["id"]) == "cancelled"
    assert PlanGrid.objects.get(pk=body["id"]).rows == []
