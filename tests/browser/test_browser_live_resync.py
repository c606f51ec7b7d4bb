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


def test_an_spu_row_in_a_message_repaints_the_spu_page_skew_and_share_cells(
        browser, viewer_client, redis_url):
    """The cells come rendered by the server; the page takes their text and colour as given."""
    from tests.helpers import register_spus

    register_spus(0, 1, rack="rack-a", online=True)
    html = viewer_client.get("/spus/").content.decode()
    page = browser.new_page()
    try:
        page.set_content(html)  # scripts with relative paths do not load: no socket
        page.add_script_tag(path=str(LIVE_JS))
        page.evaluate("(row) => window.liveApply({spus: [row]})", {
            "id": 1, "leaders": 7, "preferred": 8, "preferred_leading": 6,
            "cells": {"leader_skew": {"text": "+40%", "css": "skew-bad"},
                      "replica_skew": {"text": "+5%", "css": "skew-ok"},
                      "preferred_share": {"text": "75%", "css": "skew-warn"}}})
        row = 'tr[data-spu="1"] '
        cell = lambda name: page.locator(row + f'[data-cell="{name}"]')  # noqa: E731
        assert cell("leader_skew").inner_text() == "+40%"
        assert "skew-bad" in cell("leader_skew").get_attribute("class")
        assert cell("replica_skew").get_attribute("class").split() == ["num", "skew-ok"]
        assert cell("preferred_share").inner_text() == "75% (6/8)"
        assert "skew-warn" in cell("preferred_share").get_attribute("class")
        assert page.locator(row + '[data-field="leaders"]').inner_text() == "7"
        assert page.locator('tr[data-spu="0"] [data-cell="leader_skew"]').inner_text() != "+40%"
    finally:
        page.close()


def test_totals_in_a_message_repaint_the_overview_counts_and_the_leaderless_flag(
        browser, viewer_client, redis_url):
    from tests.helpers import register_spus

    register_spus(0, 1, rack="rack-a", online=True)
    html = viewer_client.get("/").content.decode()
    page = browser.new_page()
    try:
        page.set_content(html)
        page.add_script_tag(path=str(LIVE_JS))
        flag = page.locator('[data-total-flag="leaderless"]')
        assert "bad" not in flag.get_attribute("class").split()
        page.evaluate("(totals) => window.liveApply({totals})", {
            "spus": 3, "spus_online": 2, "partitions": 6, "leaderless": 2, "under_replicated": 1,
            "replicas": 18, "preferred_leading": 3, "racks": 2, "topics": 1})
        total = lambda name: page.locator(f'[data-total="{name}"]').inner_text()  # noqa: E731
        assert [total(n) for n in ("spus_online", "spus", "racks", "topics", "leaderless")] == [
            "2", "3", "2", "1", "2"]
        assert "bad" in flag.get_attribute("class").split()
        page.evaluate("(totals) => window.liveApply({totals})", {"leaderless": 0})
        assert "bad" not in flag.get_attribute("class").split()
    finally:
        page.close()
