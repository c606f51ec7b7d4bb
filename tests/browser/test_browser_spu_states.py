"""An SPU that serves nothing is unmistakable on every page, live, and its row offers what
can be done about it (issue 19, pages 1, 2 and 8): the real stack, Chromium at 1280 px."""
from __future__ import annotations

import re

import pytest

from tests.live_stack import running_stack
from tests.waits import BROWSER_WAIT_MS

SETUP = """
from cluster.models import ClusterState
from cluster.services import spu_connect, spu_register, topic_create
ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
for r, rack in enumerate(("rack-a", "rack-b", "rack-c", "rack-d")):
    for i in range(r * 3, r * 3 + 3):
        spu_register(spu_id=i, rack=rack)
        spu_connect(spu_id=i)
topic_create(name="orders", partitions=20, replication=3, min_lrs=2)
"""
# Where the rack heatmap draws SPU ``spu``: its load cell and its grey "not serving" cell.
HEAT_CELL = """([id, spu]) => {
  const chart = document.getElementById(id);
  if (!chart || !chart.data) return null;
  const [main, down] = chart.data;
  for (let r = 0; r < main.customdata.length; r++) {
    for (let c = 0; c < main.customdata[r].length; c++) {
      const cell = main.customdata[r][c];
      if (cell && cell[0] === spu) {
        return {load: main.z[r][c], down: down ? down.z[r][c] : null,
                text: down ? down.text[r][c] : "", state: cell[4]};
      }
    }
  }
  return null;
}"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    # A long heartbeat timeout keeps a killed loop's SPU "Online, loop killed" while the
    # test looks at it (the connection manager would mark it Offline after 3 s).
    with running_stack(tmp_path_factory.mktemp("spu-states"), before_start=SETUP,
                       settings={"REPLICATION_HEARTBEAT_TIMEOUT_S": "120"}) as stack:
        yield stack


@pytest.fixture
def pages(browser, stack):
    contexts = []

    def open_page(path: str):
        context = browser.new_context(base_url=stack.url, viewport={"width": 1280, "height": 900})
        context.set_default_timeout(BROWSER_WAIT_MS)
        contexts.append(context)
        page = context.new_page()
        page.goto("/login/")
        page.fill("input[name=username]", "operator")
        page.fill("input[name=password]", stack.password())
        page.click("button[type=submit]")
        page.wait_for_url(re.compile(r"^(?!.*login).*$"))
        page.goto(path)
        page.wait_for_function("() => window.liveState && window.liveState.open")
        page.evaluate("window.notReloaded = true")
        return page

    yield open_page
    for context in contexts:
        context.close()


def spu_is(page, selector: str, css: str, timeout: float = BROWSER_WAIT_MS) -> None:
    page.wait_for_function("([sel, css]) => { const el = document.querySelector(sel);"
                           " return el !== null && el.classList.contains(css); }",
                           arg=[selector, css], timeout=timeout)


def test_a_killed_loop_greys_the_spu_everywhere_and_its_row_offers_bring_online_live(
        stack, pages, shoot):
    overview, spus, heat = pages("/"), pages("/spus/"), pages("/heatmaps/")
    assert overview.locator('li[data-spu="3"]').get_by_role(
        "button", name="Kill SPU 3's loop").is_visible()
    busiest = heat.evaluate(HEAT_CELL, ["chart-followers", 3])
    assert busiest["load"] > 0 and busiest["down"] is None

    stack.manage("spu", "kill", "3", "--no-wait")

    spu_is(overview, 'li[data-spu="3"]', "spu-down")
    spu_is(spus, 'tr[data-spu="3"]', "spu-down")
    heat.wait_for_function(f"() => ({HEAT_CELL})(['chart-followers', 3])?.down === 1")
    for page, row in ((overview, 'li[data-spu="3"]'), (spus, 'tr[data-spu="3"]')):
        row = page.locator(row)
        assert row.locator(".down-note").inner_text().startswith("loop killed · ")
        assert row.get_by_role("button", name="Bring SPU 3 online").is_visible()
        assert row.get_by_role("button", name="Take SPU 3 offline").count() == 0
        assert row.get_by_role("button", name="Kill SPU 3's loop").count() == 0
        assert page.evaluate("window.notReloaded")
    # Not drawn as load: the followers chart leaves the cell to the grey trace.
    cell = heat.evaluate(HEAT_CELL, ["chart-followers", 3])
    assert cell["load"] is None and cell["text"] == "SPU 3<br>LOOP KILLED"
    assert heat.locator('#rack-spu-table tr[data-spu="3"]').get_attribute("class") == "spu-down"
    shoot(overview, "spu-killed-overview-1280")
    shoot(heat, "spu-killed-heatmaps-1280")

    with spus.expect_navigation():
        spus.locator('tr[data-spu="3"]').get_by_role("button", name="Bring SPU 3 online").click()
    spu_is(overview, 'li[data-spu="3"]', "spu-up")
    assert overview.locator('li[data-spu="3"]').get_by_role(
        "button", name="Take SPU 3 offline").is_visible()
    assert overview.locator('li[data-spu="3"] .down-note').inner_text() == ""


def test_an_spu_taken_offline_elsewhere_switches_its_buttons_and_says_offline(stack, pages,
                                                                              shoot):
    overview, spus = pages("/"), pages("/spus/")
    stack.manage("spu", "offline", "7")

    spu_is(overview, 'li[data-spu="7"]', "spu-down")
    spu_is(spus, 'tr[data-spu="7"]', "spu-down")
    row = spus.locator('tr[data-spu="7"]')
    note = row.locator(".down-note").inner_text()
    assert re.fullmatch(r"offline · \d+ replicas not served", note), note
    assert row.get_by_role("button", name="Bring SPU 7 online").is_visible()
    assert row.get_by_role("button", name="Take SPU 7 offline").count() == 0
    assert overview.locator('li[data-spu="7"] .counts').evaluate(
        "el => getComputedStyle(el).textDecorationLine") == "line-through"
    assert spus.evaluate("window.notReloaded") and overview.evaluate("window.notReloaded")
    shoot(spus, "spu-offline-spus-1280")
    stack.manage("spu", "online", "7")
    spu_is(spus, 'tr[data-spu="7"]', "spu-up")


def test_the_spu_page_fits_1280_px_and_the_live_badge_covers_no_button(pages, shoot):
    page = pages("/spus/")
    shoot(page, "spus-1280")
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    unregister = page.locator('tr[data-spu="11"]').get_by_role("button", name="Unregister")
    box = unregister.bounding_box()
    assert box["x"] + box["width"] <= 1280
    # Scrolled to every row in turn, the badge in the corner never lies over a button.
    overlaps = page.evaluate("""() => {
      const badge = document.getElementById("live-status");
      const hits = [];
      for (const button of document.querySelectorAll("button")) {
        if (!button.offsetParent) continue;
        button.scrollIntoView({block: "end"});
        const a = badge.getBoundingClientRect(), b = button.getBoundingClientRect();
        if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) {
          hits.push(button.textContent.trim());
        }
      }
      return hits;
    }""")
    assert overlaps == []


def test_a_net_cut_and_its_heal_appear_in_the_link_matrix_without_a_reload_or_a_poll(
        stack, pages):
    spus = pages("/spus/")
    polls: list[str] = []
    spus.on("request", lambda r: polls.append(r.url) if "/api/net/" in r.url else None)
    cell = 'tr[data-net-spu="5"] td[data-net-cell="1"]'  # SPU 5, the producers column
    assert spus.locator(cell).get_attribute("class") == "net-ok"

    stack.manage("net", "cut", "--spu", "5", "--from", "producers")
    spu_is(spus, cell, "net-cut")
    assert "SPU 5 -/- producers" in spus.locator("[data-net-cuts]").inner_text()
    # Healed through the API on the page's own session (a second command costs seconds).
    token = next(c["value"] for c in spus.context.cookies() if c["name"] == "csrftoken")
    healed = spus.request.post("/api/net/heal/", data={"all": True},
                               headers={"X-CSRFToken": token, "Referer": stack.url + "/spus/"})
    assert healed.ok, healed.text()
    spu_is(spus, cell, "net-ok")
    assert spus.locator("[data-net-cuts]").inner_text() == "No cut in force: every link works."
    assert spus.evaluate("window.notReloaded") and polls == []
