"""Issue 35.7: what live messages change on the page itself, applied as the socket would
hand them over (the payloads are pinned in tests/integration/test_healing_history_live.py
and test_pages_rack_online.py): a closed anomaly moves from the open table to History, and
"Rack online" shows only for the racks a message names as down."""
from __future__ import annotations

import pytest

from tests.helpers import register_spus

pytestmark = pytest.mark.redis


def test_an_anomaly_closing_moves_from_the_open_table_to_history_without_a_reload(
        new_page, viewer, transactional_db, shoot):
    from django.utils import timezone

    from healing.models import Anomaly

    now = timezone.now()
    a = Anomaly.objects.create(type="spu_down", subject="spu-4", state="applying",
                               detected_at=now, planned_at=now)
    page = new_page(viewer)
    page.goto("/healing/")
    assert page.locator(f'#open-anomalies tr[data-anomaly="{a.pk}"]').count() == 1
    assert page.locator("#anomaly-history tbody tr.none").count() == 1
    page.wait_for_function("() => window.healingReceive !== undefined")
    page.evaluate("""([id, at]) => window.healingReceive({type: "live.update", group: "cluster",
      seq: 7, events: [{object_type: "anomaly", object_name: String(id), operation: "healed",
        result: "re-created on SPUs 0, 2", params: {type: "spu_down", subject: "spu-4",
        plan: null, preempted_by: null, detected_at: at, planned_at: at, finished_at: at,
        moves: 3, moves_done: 3, bytes_moved: 2048, duration_s: 1.5}}]})""",
                  [a.pk, now.isoformat()])
    assert page.locator("#open-anomalies tbody").inner_text().strip() == "No open anomaly."
    rows = page.locator("#anomaly-history tbody tr")
    assert rows.count() == 1 and rows.first.get_attribute("data-anomaly") == str(a.pk)
    cells = rows.first.locator("td").all_inner_texts()
    assert cells[:3] == ["spu_down", "spu-4", "healed"]
    assert all(cells[i] for i in (3, 4, 5)), cells  # detected, planned, ended: shown local
    assert cells[7:] == ["3 / 3", "2048", "1.5 s", "re-created on SPUs 0, 2"]
    assert "None" not in rows.first.inner_text() and "undefined" not in rows.first.inner_text()
    shoot(page, "healing-history-live")


def test_rack_online_shows_and_hides_as_live_loads_name_the_racks_down(
        new_page, operator, transactional_db, redis_url, shoot):
    register_spus(0, 1, rack="rack-a", online=True)
    register_spus(2, 3, rack="rack-b", online=True)
    page = new_page(operator)
    page.goto("/spus/")
    online = {r: page.get_by_role("button", name=f"Bring rack {r} online")
              for r in ("rack-a", "rack-b")}
    assert not online["rack-a"].is_visible() and not online["rack-b"].is_visible()
    page.evaluate("() => window.liveApply({racks_down: ['rack-b']})")
    assert online["rack-b"].is_visible() and not online["rack-a"].is_visible()
    shoot(page, "rack-online-live")
    page.evaluate("() => window.liveApply({racks_down: []})")
    assert not online["rack-b"].is_visible()
