"""A plan being carried out: progress pushed to ws/plans/<id>/ (coalesced), per-SPU figures,
and the applied plan's record on its page and in GET /api/plans/<id>/."""
from __future__ import annotations

import json
import threading
import time
from datetime import datetime
from io import StringIO

import pytest
from django.core.management import call_command

from planner.live import Coalescer
from tests.helpers import register_spus, run
from tests.integration.test_live_updates import application  # noqa: F401 (a fixture)
from tests.live_sockets import (as_a_shell, drain, run_in_fresh_loop, session_cookie,
                                 socket_headers)
from tests.waits import EVENT_WAIT_S

pytestmark = pytest.mark.redis
ENDED = {"done", "cancelled", "failed"}


@pytest.fixture
def plan(redis_url, transactional_db) -> dict:
    """Twelve partitions on SPUs 0-3, each with records; SPUs 4 and 5 join empty."""
    register_spus(0, 1, 2, 3, online=True)
    run("topic", "create", "t", "--partitions", "12", "--replication", "2")
    for partition in range(12):
        run("produce", "t", "--partition", str(partition), "--count", "3", "--acks", "1")
    register_spus(4, 5, online=True)
    out = StringIO()
    call_command("plan", "rebalance", "--json", stdout=out, stderr=StringIO())
    made = json.loads(out.getvalue())
    assert len(made["moves"]) >= 3, "the plan moves replicas onto the new SPUs"
    return made


def apply_and_wait(plan_id: int, user=None, **throttle: int) -> None:
    from planner.execution import plan_apply, plan_wait
    plan_apply(plan_id=plan_id, by=user, **throttle)
    assert plan_wait(plan_id=plan_id, timeout_s=120)


def progress_heard_while(application, user, plan_id: int, action) -> tuple[list[dict], float]:
    """Every plan.progress the plan's socket heard while ``action`` ran (and just after),
    and how long that took, first offer to last message."""
    from asgiref.sync import sync_to_async
    cookie = session_cookie(user)

    async def scenario() -> tuple[list[dict], float]:
        from channels.testing import WebsocketCommunicator
        socket = WebsocketCommunicator(application, f"/ws/plans/{plan_id}/",
                                       headers=socket_headers(cookie))
        assert (await socket.connect())[0]
        started = time.monotonic()
        await sync_to_async(as_a_shell(action), thread_sensitive=False)()
        heard: list[dict] = []
        while not heard or heard[-1]["state"] not in ENDED:
            heard.append(await socket.receive_json_from(timeout=15))
        elapsed = time.monotonic() - started
        heard += await drain(socket, quiet_s=0.5)
        await socket.disconnect()
        return heard, elapsed

    return run_in_fresh_loop(scenario)


def test_applying_a_plan_pushes_progress_to_its_page_ending_done_with_every_move(
        application, plan, viewer, operator):
    heard, elapsed = progress_heard_while(application, viewer, plan["id"],
                                          lambda: apply_and_wait(plan["id"], operator))
    assert {m["type"] for m in heard} == {"plan.progress"}
    assert {m["plan"] for m in heard} == {plan["id"]}
    seqs = [m["seq"] for m in heard]
    assert seqs == sorted(set(seqs)), "numbered in order, each once"
    last = heard[-1]
    assert last["state"] == "done" and last["moves_in_flight"] == 0
    assert last["moves_done"] == last["moves_total"] == len(plan["moves"])
    assert any(0 < m["moves_done"] < m["moves_total"] for m in heard) or len(heard) >= 2
    # Coalesced: one message per window at most, over the windows the apply spanned.
    assert len(heard) <= elapsed / 0.1 + 2


def test_the_last_message_carries_per_spu_figures_that_add_up(application, plan, viewer,
                                                              operator):
    heard, _ = progress_heard_while(application, viewer, plan["id"],
                                    lambda: apply_and_wait(plan["id"], operator))
    last = heard[-1]
    rows = {r["spu"]: r for r in last["per_spu"]}
    assert {4, 5} <= set(rows)
    assert all(r["moves_in_done"] == r["moves_in_total"] and r["moves_in_flight"] == 0
               and r["moves_out_done"] == r["moves_out_total"] for r in rows.values())
    assert sum(r["moves_in_total"] for r in rows.values()) == sum(
        len(m["added"]) for m in plan["moves"])
    assert last["bytes_moved"] > 0
    assert sum(r["bytes_moved"] for r in rows.values()) == last["bytes_moved"]


def test_a_pause_is_pushed_before_any_move_ends(application, plan, viewer, operator):
    from planner.execution import plan_apply, plan_pause

    def pause() -> None:
        plan_apply(plan_id=plan["id"], by=operator)
        plan_pause(plan_id=plan["id"], by=operator)

    cookie = session_cookie(viewer)

    async def scenario() -> list[dict]:
        from asgiref.sync import sync_to_async
        from channels.testing import WebsocketCommunicator
        socket = WebsocketCommunicator(application, f"/ws/plans/{plan['id']}/",
                                       headers=socket_headers(cookie))
        assert (await socket.connect())[0]
        await sync_to_async(as_a_shell(pause), thread_sensitive=False)()
        heard = [await socket.receive_json_from(timeout=15)]
        heard += await drain(socket, quiet_s=0.5)
        await socket.disconnect()
        return heard

    heard = run_in_fresh_loop(scenario)
    assert heard[-1]["state"] == "paused" and heard[-1]["moves_done"] == 0


def test_a_signed_in_user_in_no_group_gets_no_plan_socket(application, transactional_db,
                                                          django_user_model):
    nobody = django_user_model.objects.create_user("nobody", password="nobody-pass-123")
    cookie = session_cookie(nobody)

    async def scenario() -> tuple[bool, object]:
        from channels.testing import WebsocketCommunicator
        return await WebsocketCommunicator(application, "/ws/plans/1/",
                                           headers=socket_headers(cookie)).connect()

    assert run_in_fresh_loop(scenario) == (False, 4403)


# ---- the coalescer on its own --------------------------------------------------------

def wait_for(predicate, seconds: float = EVENT_WAIT_S) -> None:
    deadline = time.monotonic() + seconds
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert predicate()


def test_a_burst_of_offers_goes_out_as_few_messages_ending_with_the_latest():
    sent: list[tuple[str, int]] = []
    coalescer = Coalescer(lambda group, payload: sent.append((group, payload["n"])),
                          window_s=0.1)
    started = time.monotonic()
    for n in range(200):
        coalescer.offer("plan-1", lambda n=n: {"n": n})
        time.sleep(0.002)
    wait_for(lambda: sent and sent[-1][1] == 199)
    elapsed = time.monotonic() - started
    numbers = [n for _, n in sent]
    assert numbers == sorted(set(numbers)), "never an older state after a newer one"
    # Sends are a window apart at least: bounded by the windows the burst spanned.
    assert len(sent) <= elapsed / 0.1 + 2 < 200


def test_each_group_gets_its_own_latest_and_a_failed_send_does_not_stop_the_others():
    sent: list[tuple[str, int]] = []
    lock = threading.Lock()

    def send(group: str, payload: dict) -> None:
        if payload["n"] == -1:
            raise RuntimeError("channel layer down")
        with lock:
            sent.append((group, payload["n"]))

    coalescer = Coalescer(send, window_s=0.05)
    coalescer.offer("plan-1", lambda: {"n": -1})
    wait_for(coalescer.idle)
    time.sleep(0.1)
    for n in range(3):
        coalescer.offer("plan-1", lambda n=n: {"n": n})
        coalescer.offer("plan-2", lambda n=n: {"n": 10 + n})
    wait_for(lambda: ("plan-1", 2) in sent and ("plan-2", 12) in sent)


# ---- the applied plan's record --------------------------------------------------------

def test_the_api_answers_the_execution_record_with_per_spu_figures(plan, api, operator):
    before = api.get(f"/api/plans/{plan['id']}/").json()
    assert before["execution"] is None
    assert {m["outcome"] for m in before["moves"]["results"]} == {None}
    apply_and_wait(plan["id"], operator, max_moves=2)
    body = api.get(f"/api/plans/{plan['id']}/?limit=100").json()
    record = body["execution"]
    assert record["state"] == body["state"] == "done"
    assert record["applied_by"] == operator.username
    assert record["max_moves"] == 2 and record["moves_done"] == len(plan["moves"])
    took = (datetime.fromisoformat(record["finished_at"])
            - datetime.fromisoformat(record["started_at"])).total_seconds()
    assert record["duration_s"] == pytest.approx(took, abs=0.002) and took > 0
    assert sum(r["bytes_moved"] for r in record["per_spu"]) == record["bytes_moved"]
    assert {m["outcome"] for m in body["moves"]["results"]} == {"done"}


def test_a_cancelled_plans_moves_say_which_landed_and_which_did_not(plan, api, operator):
    from cluster.services.waiting import wait_until
    from planner.execution import plan_apply, plan_cancel, plan_wait
    from planner.models import PlanExecution

    plan_apply(plan_id=plan["id"], by=operator, max_moves=1, max_moves_per_spu=1)
    assert wait_until(lambda: PlanExecution.objects.get().moves_done >= 1, timeout_s=60)
    plan_cancel(plan_id=plan["id"], by=operator)
    assert plan_wait(plan_id=plan["id"], timeout_s=60)
    e = PlanExecution.objects.get()
    outcomes = [m["outcome"] for m in
                api.get(f"/api/plans/{plan['id']}/?limit=100").json()["moves"]["results"]]
    assert e.state == "cancelled" and outcomes.count("done") == e.moves_done
    assert outcomes.count("failed") == e.moves_failed
    # Moves that never started say so: nothing is waiting for a plan that has ended.
    assert "not started" in outcomes and "waiting" not in outcomes
    assert "in flight" not in outcomes


def test_the_plan_page_shows_who_applied_it_how_long_it_took_and_each_spu(plan, operator,
                                                                        operator_client):
    apply_and_wait(plan["id"], operator)
    page = operator_client.get(f"/planner/plans/{plan['id']}/").content.decode()
    assert f'data-field="applied_by">{operator.username}<' in page
    assert 'data-field="duration_s">–<' not in page
    assert 'id="apply-spus"' in page and 'data-spu="4"' in page and 'data-spu="5"' in page
    assert 'class="outcome outcome-done">done<' in page


def test_the_plan_list_shows_an_applied_plans_state_and_who_applied_it(plan, operator,
                                                                     operator_client):
    import re
    listed = operator_client.get("/planner/").content.decode()
    row = re.search(rf'<tr data-plan="{plan["id"]}">.*?</tr>', listed, re.S).group(0)
    assert ">pending<" in row and '<td class="applied">–</td>' in row
    apply_and_wait(plan["id"], operator)
    listed = operator_client.get("/planner/").content.decode()
    row = re.search(rf'<tr data-plan="{plan["id"]}">.*?</tr>', listed, re.S).group(0)
    assert ">done<" in row and ">pending<" not in row
    n = len(plan["moves"])
    assert re.search(rf"by {operator.username} at .*: {n} of {n} moves in [0-9.]+ s", row)


def test_the_cluster_pages_hear_the_plan_counts_stamped_like_every_live_message(
        application, plan, viewer, operator):
    """live.js reloads a page on a message without the format version: these carry it."""
    from asgiref.sync import sync_to_async

    from cluster.live import FORMAT_VERSION
    from tests.live_sockets import open_socket
    cookie = session_cookie(viewer)

    async def scenario() -> list[dict]:
        socket, hello = await open_socket(application, "/ws/cluster/", cookie)
        await sync_to_async(as_a_shell(apply_and_wait), thread_sensitive=False)(
            plan["id"], operator)
        heard = await drain(socket, quiet_s=1.0)
        await socket.disconnect()
        return [m for m in heard if m["type"] == "plan.progress"]

    progress = run_in_fresh_loop(scenario)
    assert progress and all(m["v"] == FORMAT_VERSION and m["group"] == "cluster"
                            and isinstance(m["seq"], int) for m in progress)
    assert progress[-1]["state"] == "done"
    assert progress[-1]["moves_done"] == progress[-1]["moves_total"] == len(plan["moves"])
