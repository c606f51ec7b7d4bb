"""A running plan's throttles change from its page, the API and ``plan throttle``, and the
executor starts its next moves under the new values."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from rest_framework.test import APIClient

from cluster.models import Event
from planner.models import PlanExecution
from tests.helpers import refused, register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def quiet(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def tick() -> PlanExecution:
    from cluster.services.replication import replication_tick
    from cluster.services.waiting import LocalQueue

    replication_tick(dispatch=LocalQueue())
    return PlanExecution.objects.get()


def throttles() -> tuple[int, int, int | None]:
    e = PlanExecution.objects.get()
    return e.max_moves_per_spu, e.max_moves, e.throttle_bytes_per_s


@pytest.fixture
def plan_id(redis_url) -> int:
    """Twelve partitions on SPUs 0-3, each with records; SPUs 4 and 5 just joined, empty."""
    register_spus(0, 1, 2, 3, online=True)
    run("topic", "create", "t", "--partitions", "12", "--replication", "2")
    for partition in range(12):
        run("produce", "t", "--partition", str(partition), "--count", "5", "--acks", "all")
    register_spus(4, 5, online=True)
    plan = json.loads(quiet("plan", "rebalance", "--json"))
    assert len(plan["moves"]) >= 4, "enough moves to throttle"
    return plan["id"]


@pytest.fixture
def running(plan_id) -> int:
    quiet("plan", "apply", str(plan_id), "--max-moves-per-spu", "1", "--max-moves", "1")
    return plan_id


# ---- the executor ------------------------------------------------------------------

def test_raised_move_counts_let_the_next_step_start_more_moves(running):
    assert len(tick().in_flight) == 1, "one move at most, as applied"
    quiet("plan", "throttle", str(running), "--max-moves", "6", "--max-moves-per-spu", "5")
    assert len(tick().in_flight) >= 2


def test_a_byte_throttle_removed_lets_the_moves_it_held_start(plan_id, settings):
    settings.REPLICATION_RECORD_BYTES = 100  # each move copies 500 bytes to a new replica
    quiet("plan", "apply", str(plan_id), "--throttle-bytes-per-s", "1")
    for _ in range(3):
        held = tick()
    assert len(held.started) == 1, "one second of 1 B/s pays for one move's start, no more"
    quiet("plan", "throttle", str(plan_id), "--no-byte-throttle")
    assert len(tick().started) > 1


def test_a_lowered_move_count_starts_nothing_while_that_many_are_in_flight(plan_id):
    quiet("plan", "apply", str(plan_id), "--max-moves", "3")
    flying = tick()
    assert len(flying.in_flight) >= 2
    quiet("plan", "throttle", str(plan_id), "--max-moves", "1")
    assert len(tick().started) == len(flying.started)


# ---- the API -----------------------------------------------------------------------

def test_patch_changes_the_named_throttles_and_answers_the_status(running, api):
    response = api.patch(f"/api/plans/{running}/throttle/", {"max_moves": 4}, format="json")
    assert response.status_code == 200
    assert (response.json()["max_moves"], response.json()["max_moves_per_spu"]) == (4, 1)
    assert throttles() == (1, 4, None)
    assert Event.objects.filter(object_type="plan", object_name=str(running),
                                operation="throttle").exists()


def test_post_sets_and_null_removes_the_byte_throttle(running, api):
    url = f"/api/plans/{running}/throttle/"
    assert api.post(url, {"throttle_bytes_per_s": 5000}, format="json").status_code == 200
    assert throttles() == (1, 1, 5000)
    assert api.post(url, {"throttle_bytes_per_s": None}, format="json").status_code == 200
    assert throttles() == (1, 1, None)


@pytest.mark.parametrize("body", [{"max_moves": 0}, {"max_moves_per_spu": -1},
                                  {"throttle_bytes_per_s": 0}, {"speed": 10}, {},
                                  {"max_moves": "many"}])
def test_bad_values_are_a_400_with_a_json_error_and_change_nothing(running, api, body):
    response = api.patch(f"/api/plans/{running}/throttle/", body, format="json")
    assert response.status_code == 400 and set(response.json()) >= {"error", "details"}
    assert throttles() == (1, 1, None)


def test_a_plan_not_under_way_is_a_409(plan_id, api):
    response = api.patch(f"/api/plans/{plan_id}/throttle/", {"max_moves": 2}, format="json")
    assert response.status_code == 409 and response.json()["details"] == {"state": "pending"}
    assert api.patch("/api/plans/999/throttle/", {"max_moves": 2},
                     format="json").status_code == 404


def test_a_viewer_is_refused(running, viewer):
    client = APIClient()
    client.force_authenticate(viewer)
    response = client.patch(f"/api/plans/{running}/throttle/", {"max_moves": 9}, format="json")
    assert response.status_code == 403 and throttles() == (1, 1, None)


# ---- the command -------------------------------------------------------------------

def test_the_command_changes_the_throttle_and_prints_the_status(running):
    shown = json.loads(quiet("plan", "throttle", str(running), "--throttle-bytes-per-s",
                             "2048", "--max-moves", "7", "--json"))
    assert (shown["max_moves"], shown["throttle_bytes_per_s"]) == (7, 2048)
    assert "throttle 2,048 bytes/s" in quiet("plan", "throttle", str(running),
                                             "--max-moves-per-spu", "2")


@pytest.mark.parametrize("flags", [["--max-moves", "0"], [], ["--throttle-bytes-per-s", "0"],
                                   ["--max-moves-per-spu", "-3"]])
def test_bad_input_exits_2_and_changes_nothing(running, flags):
    refused("plan", "throttle", str(running), *flags)
    assert throttles() == (1, 1, None)


@pytest.mark.parametrize("flags", [["--max-moves", "x"],
                                   ["--throttle-bytes-per-s", "5", "--no-byte-throttle"]])
def test_flags_argparse_refuses_change_nothing(running, flags):
    # A usage error: argparse's exit 2 on a command line, a CommandError in-process.
    with pytest.raises(CommandError, match="Error: argument"):
        call_command("plan", "throttle", str(running), *flags, stdout=StringIO())
    assert throttles() == (1, 1, None)


def test_no_flag_says_which_flags_there_are(running):
    assert "--no-byte-throttle" in str(refused("plan", "throttle", str(running)))


def test_a_plan_not_under_way_or_unknown_exits_2(plan_id):
    assert "only the throttle of a running or paused plan" in str(
        refused("plan", "throttle", str(plan_id), "--max-moves", "3"))
    refused("plan", "throttle", "999", "--max-moves", "3")


# ---- the page ----------------------------------------------------------------------

THROTTLE = {"max_moves_per_spu": "2", "max_moves": "8", "throttle_bytes_per_s": ""}


def test_the_page_offers_the_running_plans_throttle_to_change(running, operator_client):
    page = operator_client.get(f"/planner/plans/{running}/").content.decode()
    assert 'id="throttle-form"' in page
    assert 'name="max_moves" value="1"' in page and 'for="id_throttle_max_moves"' in page
    answer = operator_client.post(f"/planner/plans/{running}/throttle/", THROTTLE)
    assert answer.status_code == 302 and answer["Location"].endswith("#apply")
    assert throttles() == (2, 8, None)


def test_a_bad_value_is_shown_next_to_its_field_and_changes_nothing(running, operator_client):
    answer = operator_client.post(f"/planner/plans/{running}/throttle/",
                                  {**THROTTLE, "max_moves": "0"})
    assert answer.status_code == 400
    assert 'id="id_throttle_max_moves-error"' in answer.content.decode()
    assert throttles() == (1, 1, None)


def test_an_ended_plan_has_no_throttle_form_and_a_change_says_why(plan_id, operator_client):
    quiet("plan", "apply", str(plan_id), "--wait")
    page = operator_client.get(f"/planner/plans/{plan_id}/").content.decode()
    assert 'id="throttle-form"' not in page
    answer = operator_client.post(f"/planner/plans/{plan_id}/throttle/", THROTTLE, follow=True)
    assert "only the throttle of a running or paused plan" in answer.content.decode()


def test_a_viewer_cannot_change_it_from_the_page(running, viewer_client):
    page = viewer_client.get(f"/planner/plans/{running}/").content.decode()
    assert 'id="throttle-form"' not in page
    assert viewer_client.post(f"/planner/plans/{running}/throttle/",
                              THROTTLE).status_code == 403
    assert throttles() == (1, 1, None)
