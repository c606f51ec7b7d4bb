"""Issue 35.7 (b): a running plan's live updates (static/js/plan_apply.js) keep the units the
page renders: MiB, MiB/s, minutes and seconds, local times; the note on a copy rate above
the throttle follows the rate."""
from __future__ import annotations

from pathlib import Path

STATIC = Path(__file__).resolve().parents[2] / "static" / "js"
# The Apply card's fields as templates/planner/plan.html renders them.
CARD = """<!doctype html><body><section id="apply" data-plan-api="/nowhere/" data-plan-id="1"
 data-state="running" data-finished=""><dl id="apply-status">
 <dd data-field="bytes_copied" data-format="bytes">–</dd>
 <dd data-field="bytes_per_s" data-format="rate">–</dd>
 <dd data-field="eta_s" data-format="duration">–</dd>
 <dd data-field="started_at" data-format="time">–</dd>
 <dd data-field="moves_done">0</dd></dl>
 <p class="hint" id="rate-note" hidden>Why</p></section></body>"""
RECORD = {"state": "running", "finished_at": None, "moves_total": 9, "moves_done": 4,
          "bytes_copied": 5 * 1024 * 1024 + 512 * 1024, "bytes_per_s": 2 * 1024 * 1024,
          "throttle_bytes_per_s": 1024 * 1024, "eta_s": 185.4,
          "started_at": "2026-11-27T09:15:42.123456+00:00", "per_spu": []}


def test_live_updates_show_human_units_and_the_note_on_a_rate_above_the_throttle(browser):
    page = browser.new_page()
    try:
        page.set_content(CARD)
        page.add_script_tag(path=str(STATIC / "time.js"))
        page.add_script_tag(path=str(STATIC / "plan_apply.js"))
        page.evaluate("(r) => window.planApply.show(r)", RECORD)
        field = lambda name: page.locator(f"[data-field='{name}']").inner_text()  # noqa: E731
        assert field("bytes_copied") == "5.5 MiB"
        assert field("bytes_per_s") == "2 MiB/s"
        assert field("eta_s") == "3 min 5 s"
        assert field("moves_done") == "4"
        started = page.locator("[data-field='started_at'] time")
        assert started.get_attribute("datetime") == RECORD["started_at"]
        assert ".123456" not in field("started_at") and ":" in field("started_at")
        assert page.locator("#rate-note").is_visible()
        page.evaluate("(r) => window.planApply.show(r)",
                      {**RECORD, "bytes_per_s": 512 * 1024})
        assert not page.locator("#rate-note").is_visible()
        assert field("bytes_per_s") == "512 KiB/s"
    finally:
        page.close()
