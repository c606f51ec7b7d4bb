"""The page's hello decision (static/js/live.js): which groups to resync from the snapshot."""
from __future__ import annotations

from pathlib import Path

LIVE_JS = Path(__file__).resolve().parents[2] / "static" / "js" / "live.js"


def groups_to_resync(browser, rendered: dict, hello: dict, reconnected: bool) -> list[str]:
    page = browser.new_page()
    try:
        page.set_content("<!doctype html><body></body>")  # no socket: only the pure part runs
        page.add_script_tag(path=str(LIVE_JS))
        return page.evaluate("([r, h, again]) => window.liveGroupsToResync(r, h, again)",
                             [rendered, hello, reconnected])
    finally:
        page.close()


def test_a_group_whose_hello_is_beyond_the_render_is_resynced_and_the_others_are_not(browser):
    got = groups_to_resync(browser, {"cluster": 4, "topic-a.0": 9},
                           {"cluster": 5, "topic-a.0": 9}, reconnected=False)
    assert got == ["cluster"]


def test_a_group_the_page_did_not_number_takes_the_hello_as_it_comes(browser):
    assert groups_to_resync(browser, {}, {"cluster": 5}, reconnected=False) == []


def test_after_a_reconnect_every_group_is_resynced(browser):
    got = groups_to_resync(browser, {"cluster": 5}, {"cluster": 5, "topic-a": 1},
                           reconnected=True)
    assert got == ["cluster", "topic-a"]
