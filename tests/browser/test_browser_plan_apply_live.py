"""Applying a plan on the real stack (daphne, a Celery worker and beat, a private Redis): the
page follows the apply over its socket, reading the API only when the socket opens."""
from __future__ import annotations

import json
import re

import pytest

from tests.browser.test_browser_live import logged_in_page
from tests.live_stack import running_stack

pytestmark = pytest.mark.redis

SETUP = """
from cluster.models import ClusterState
from cluster.services import spu_connect, spu_register, topic_create
ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
for rack, ids in (("rack-a", (0, 1)), ("rack-b", (2, 3)), ("rack-c", (4, 5))):
    for i in ids:
        spu_register(spu_id=i, rack=rack)
        spu_connect(spu_id=i)
topic_create(name="orders", partitions=36, replication=2)
spu_register(spu_id=6, rack="rack-a")
spu_connect(spu_id=6)
"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    # Ticks five times a second, so the apply takes seconds rather than a minute.
    with running_stack(tmp_path_factory.mktemp("plan-stack"), before_start=SETUP,
                       settings={"REPLICATION_TICK_S": "0.2"}) as stack:
        yield stack


def test_the_apply_progress_reaches_the_page_over_its_socket_not_by_polling(browser, stack):
    plan = json.loads(stack.manage("plan", "rebalance", "--json"))
    assert len(plan["moves"]) >= 2
    context, page = logged_in_page(browser, stack)
    frames: list[dict] = []
    reads: list[str] = []
    sockets: list[object] = []

    def watch(ws) -> None:
        sockets.append(ws)
        ws.on("framereceived", lambda payload: frames.append(json.loads(payload)))
    page.on("websocket", watch)
    page.on("request", lambda r: reads.append(r.url)
            if re.search(rf"/api/plans/{plan['id']}/", r.url) else None)
    try:
        page.goto(f"/planner/plans/{plan['id']}/")
        page.fill("#id_max_moves", "1")  # one move at a time: several messages on the way
        page.check("#id_confirm")
        page.click("#apply-plan")
        page.wait_for_selector("#apply-status [data-field='state']:text('done')", timeout=120_000)
        progress = [f for f in frames if f.get("type") == "plan.progress"]
        assert progress and progress[-1]["state"] == "done"
        assert progress[-1]["moves_done"] == progress[-1]["moves_total"] == len(plan["moves"])
        assert len({f["moves_done"] for f in progress}) >= 2, "progress shown as moves landed"
        # One read per socket opened, and one per skipped sequence number: not a poll.
        assert sockets and len(reads) <= 2 * len(sockets) and len(reads) < len(progress)
        row = page.locator("#apply-spus tr[data-spu='6']")
        assert row.locator("[data-field='moves_in_done']").inner_text() == \
            row.locator("[data-field='moves_in_total']").inner_text() != "0"
    finally:
        context.close()
