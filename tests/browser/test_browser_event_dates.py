"""Issue 35.7 (d): events show their day. static/js/time.js shortens a time of today to
its clock; an event's time (inside [data-dates], or a <time data-date> a live row adds)
keeps the day."""
from __future__ import annotations

from pathlib import Path

TIME_JS = Path(__file__).resolve().parents[2] / "static" / "js" / "time.js"
PAGE = """<!doctype html><body>
<table data-dates><tr><td><time id="event" datetime="{now}">x</time></td></tr></table>
<p><time id="plain" datetime="{now}">x</time></p>
<p><time id="live" data-date datetime="{now}">x</time></p>
</body>"""


def test_an_event_of_today_shows_its_day_and_a_plain_time_only_its_clock(browser):
    page = browser.new_page()
    try:
        page.set_content("<!doctype html><body></body>")
        now = page.evaluate("() => new Date().toISOString()")
        page.set_content(PAGE.format(now=now))
        page.add_script_tag(path=str(TIME_JS))
        day = page.evaluate("(iso) => new Date(iso).toLocaleDateString(undefined, "
                            "{day: 'numeric', month: 'short'})", now)
        page.wait_for_function("() => document.getElementById('plain').textContent !== 'x'")
        plain = page.locator("#plain").inner_text()
        assert len(plain) == 8 and plain.count(":") == 2  # 14:03:12
        for element in ("#event", "#live"):
            text = page.locator(element).inner_text()
            assert text.startswith(day + " ") and text.endswith(plain), (element, text)
    finally:
        page.close()
