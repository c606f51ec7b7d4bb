"""A viewer scrubs the history back to before a rack outage and forward past it in
Chromium: the heatmap and the offline markers change; the outage's before / after
link lists the partitions whose leader moved."""
from __future__ import annotations

import pytest

from tests.helpers import register_spus, run

pytestmark = pytest.mark.redis


@pytest.fixture
def rack_outage(transactional_db, redis_url, settings):
    """Offsets just before and just after rack-a went offline."""
    from cluster.adapters import metadata_log
    from cluster.ports import bound_to_store
    from cluster.models import ClusterState
    from history import checkpoints

    settings.HISTORY_HW_INTERVAL_S = 0
    checkpoints.forget()
    ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
    for rack, ids in (("rack-a", (0, 1)), ("rack-b", (2, 3)), ("rack-c", (4, 5))):
        register_spus(*ids, rack=rack, online=True)
    run("topic", "create", "orders", "-p", "6", "-r", "3")
    run("produce", "orders", "--count", "3", "--acks", "all")
    with bound_to_store():
        before = metadata_log.head()
    run("rack", "offline", "rack-a")
    with bound_to_store():
        return before, metadata_log.head()


def _scrub_to(page, offset: int) -> None:
    """Drag the slider to the moment of ``offset`` (its time) and wait for the replay."""
    from history.selectors import Point, moment_at

    at = moment_at(Point(offset=offset))[0].at
    page.eval_on_selector("#history-slider", "(el, at) => { el.value = at; "
                          "el.dispatchEvent(new Event('input')); }", at)
    page.wait_for_function("(o) => document.getElementById('scrubber').dataset.shown == o",
                           arg=str(offset))


def _states(page) -> dict[str, str]:
    rows = page.locator("#history-spus tbody tr")
    return {rows.nth(i).get_attribute("data-spu"): rows.nth(i).locator("[data-field=state]")
            .inner_text() for i in range(rows.count())}


def _down_cells(page) -> int:
    """Cells of the leaders heatmap's "not serving" trace (the grey offline markers)."""
    return page.eval_on_selector("#chart-leaders", "el => (el.data || []).filter("
                                 "t => t.name === 'not serving').flatMap(t => t.z.flat())"
                                 ".filter(v => v === 1).length")


def test_scrubbing_across_an_outage_changes_the_heatmap_and_the_diff_lists_moved_leaders(
        new_page, viewer, rack_outage, shoot):
    before, after = rack_outage
    page = new_page(viewer)
    page.goto(f"/history/?at={after}")
    assert "History begins at offset 0" in page.locator("#history-begins").inner_text()
    page.wait_for_function("document.getElementById('chart-leaders').dataset.drawn === '1'")
    assert _states(page)["0"] == "offline" and _down_cells(page) == 2

    _scrub_to(page, before)
    assert set(_states(page).values()) == {"online"} and _down_cells(page) == 0
    _scrub_to(page, after)
    assert _states(page)["0"] == _states(page)["1"] == "offline" and _down_cells(page) == 2
    shoot(page, "history-after-outage")

    page.locator("#history-events summary").click()
    page.locator("#history-events li.mark-outage").first.get_by_role(
        "link", name="before / after").click()
    page.wait_for_selector("#diff-partitions")
    moved = page.locator('#diff-partitions tr[data-changed*="leader"]')
    assert moved.count() > 0
    assert int(page.locator('[data-count="leader"]').inner_text()) == moved.count()

    # A live event row the events page adds (the payload the server sends) links to its
    # moment by log offset, as the rows drawn with the page do.
    from cluster.models import Event
    from cluster.projections.announce import event_row

    row = event_row(Event.objects.exclude(log_offset=None).order_by("-log_offset").first())
    assert row["log_offset"] is not None
    page.goto("/events/")
    page.evaluate("(row) => window.liveApply({type: 'live.update', events: [row]})", row)
    first = page.locator("tbody[data-live-events] tr").first
    assert first.locator("a.moment-link").get_attribute("href") == \
        f"/history/?at={row['log_offset']}"
