"""ws/plans/<id>/ and ws/grids/<id>/: a viewer hears the job's progress; anonymous is refused."""
from __future__ import annotations

import pytest
from channels.testing import WebsocketCommunicator

from tests.integration.test_live_updates import application  # noqa: F401 (a fixture)
from tests.integration.test_live_updates import _headers, _session_cookie, run_in_fresh_loop

pytestmark = pytest.mark.redis


@pytest.mark.parametrize("kind", ["plan", "grid"])
def test_a_viewer_hears_the_progress_of_that_job_only(application, transactional_db, viewer,
                                                      kind):
    from asgiref.sync import sync_to_async

    from planner.live import publish_progress
    cookie = _session_cookie(viewer)

    async def scenario() -> dict:
        mine = WebsocketCommunicator(application, f"/ws/{kind}s/7/", headers=_headers(cookie))
        other = WebsocketCommunicator(application, f"/ws/{kind}s/8/", headers=_headers(cookie))
        assert (await mine.connect())[0] and (await other.connect())[0]
        await sync_to_async(publish_progress)(kind, 7, "computing", {
            "stage": "placing replicas", "fraction": 0.4, "eta_s": 3.0})
        got = await mine.receive_json_from(timeout=30)
        assert await other.receive_nothing(timeout=0.2)
        await mine.disconnect()
        await other.disconnect()
        return got

    got = run_in_fresh_loop(scenario)
    assert got == {"type": "job.progress", "kind": kind, "id": 7, "state": "computing",
                   "stage": "placing replicas", "fraction": 0.4, "eta_s": 3.0, "reason": ""}


def test_an_anonymous_socket_is_refused_on_a_plan(application, transactional_db):
    async def scenario() -> tuple[bool, object]:
        return await WebsocketCommunicator(application, "/ws/plans/1/",
                                           headers=_headers()).connect()

    assert run_in_fresh_loop(scenario) == (False, 4401)
