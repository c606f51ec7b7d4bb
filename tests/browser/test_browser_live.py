"""Two live pages on the real stack (daphne, a Celery worker and beat, a private Redis):
an operator takes the topic's leader SPU offline from the topic page; the topic page and
the heatmaps page both show the new leader live, without loading any page again (how fast
is bench_live.py's to measure: a budget here failed under load, issue 35)."""
from __future__ import annotations

import re
import time

import pytest

from tests.live_stack import running_stack
from tests.waits import BROWSER_WAIT_MS

pytestmark = pytest.mark.redis

SETUP = """
from cluster.models import ClusterState
from cluster.services import spu_connect, spu_register, topic_create
ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
for rack, ids in (("rack-a", (0, 1)), ("rack-b", (2, 3)), ("rack-c", (4, 5))):
    for i in ids:
        spu_register(spu_id=i, rack=rack)
        spu_connect(spu_id=i)
topic_create(name="orders", partitions=6, replication=3, min_lrs=2)
"""
LEADERS_OF = """(spu) => {
  const chart = document.getElementById("chart-leaders");
  if (!chart || !chart.data) return null;
  const cells = chart.data[0].customdata.flat().filter((c) => c && c[0] === spu);
  return cells.length ? cells[0][1] : null;
}"""


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("live-stack"), before_start=SETUP) as stack:
        yield stack


def logged_in_page(browser, stack):
    context = browser.new_context(base_url=stack.url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(BROWSER_WAIT_MS)
    page = context.new_page()
    page.goto("/login/")
    page.fill("input[name=username]", "operator")
    page.fill("input[name=password]", stack.password())
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url(re.compile(r"^(?!.*login).*$"))
    return context, page


def full_page_loads(page) -> list[str]:
    loads: list[str] = []
    page.on("request", lambda r: loads.append(r.url) if r.resource_type == "document" else None)
    return loads


def leader_of(page, partition: int) -> str:
    cell = page.locator(f'tr[data-partition="{partition}"] td.leader').inner_text()
    return re.match(r"(SPU \d+|none)", cell.strip()).group(1)


def test_a_leader_taken_offline_shows_on_the_topic_and_heatmaps_pages_live(browser, stack):
    topic_ctx, topic = logged_in_page(browser, stack)
    heat_ctx, heat = logged_in_page(browser, stack)
    try:
        topic.goto("/topics/orders/")
        topic.wait_for_function("() => !document.querySelector('td.leader .bad')"
                                " && window.liveState && window.liveState.open")
        heat.goto("/heatmaps/")
        heat.wait_for_function("() => window.liveState && window.liveState.open"
                               " && document.getElementById('chart-leaders').data")
        old = int(leader_of(topic, 0).split()[1])
        assert heat.evaluate(LEADERS_OF, old) >= 1
        topic.evaluate("window.loadedOnce = true")
        heat.evaluate("window.loadedOnce = true")
        topic_loads, heat_loads = full_page_loads(topic), full_page_loads(heat)

        topic.locator(".outage-panel summary").click()
        topic.once("dialog", lambda dialog: dialog.accept())
        started = time.monotonic()
        topic.get_by_role("button", name=f"Take SPU {old} offline").click()
        # "none" may show first (leaderless until the election ends): wait for a leader
        # other than the SPU taken offline.
        topic.wait_for_function(
            "(old) => { const m = /^SPU (\\d+)\\b/.exec(document.querySelector("
            "'tr[data-partition=\"0\"] td.leader').textContent.trim());"
            " return m !== null && Number(m[1]) !== old; }", arg=old, timeout=BROWSER_WAIT_MS)
        heat.wait_for_function(f"(spu) => ({LEADERS_OF})(spu) === 0", arg=old,
                               timeout=BROWSER_WAIT_MS)
        elapsed = time.monotonic() - started
        print(f"leader change shown on both pages {elapsed:.2f} s after the click; "
              f"arrivals: {topic.evaluate('window.liveState.applied')} topic, "
              f"{heat.evaluate('window.liveState.applied')} heatmaps messages")
        assert leader_of(topic, 0) not in (f"SPU {old}", "none")
        assert heat.locator(f'#rack-spu-table tr[data-spu="{old}"] [data-field="leaders"]'
                            ).text_content() == "0"
        assert topic_loads == [] and heat_loads == [], (topic_loads, heat_loads)
        assert topic.evaluate("window.loadedOnce") and heat.evaluate("window.loadedOnce")
        assert topic.locator(".action-result").inner_text() == f"SPU {old}: Offline"
    finally:
        topic_ctx.close()
        heat_ctx.close()


def test_a_socket_on_a_path_no_page_uses_is_refused_without_a_server_error(stack):
    import websockets

    from tests.live_sockets import run_in_fresh_loop

    async def handshake(path: str) -> object:
        headers = {"Cookie": f"sessionid={stack.session_cookie()}", "Origin": stack.url}
        try:
            async with websockets.connect(stack.url.replace("http", "ws") + path,
                                          additional_headers=headers) as socket:
                await socket.recv()
        except websockets.InvalidStatus as refused:
            return refused.response.status_code
        except websockets.ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else None
        return "open"

    for path in ("/ws/topics/..%2F/", "/ws/nowhere/"):
        outcome = run_in_fresh_loop(lambda: handshake(path))
        assert outcome != 500 and outcome in (403, 4404), (path, outcome)


def live_page(browser, stack, url: str) -> tuple:
    """A page on ``url``, live, with the requests it makes from now on and the count of
    snapshots it fetched so far."""
    context, page = logged_in_page(browser, stack)
    page.goto(url)
    page.wait_for_function("() => window.liveState && window.liveState.open && document"
                           ".getElementById('live-status').dataset.state === 'live'")
    requests: list[str] = []
    page.on("request", lambda r: requests.append(f"{r.resource_type} {r.url}"))
    return context, page, requests, page.evaluate("window.liveState.snapshots")


def fetched_one_snapshot(page, requests: list[str], before: int, group: str) -> None:
    """Wait until the page fetched a snapshot of ``group``, and loaded no page for it."""
    page.wait_for_function(f"() => window.liveState.snapshots > {before}",
                           timeout=BROWSER_WAIT_MS)
    assert [r for r in requests if r.startswith("document")] == []
    assert any(f"/api/live/snapshot/?group={group}" in r for r in requests), requests


def test_a_sequence_gap_makes_the_page_fetch_one_snapshot_and_no_page(browser, stack):
    context, page, requests, before = live_page(browser, stack, "/topics/orders/")
    try:
        # A message this page never gets: the sequence moves on, then a real batch follows.
        stack.python("from cluster.adapters.live_batches import next_seq, stage\n"
                     "next_seq('topic-orders.0')\n"
                     "stage('topic-orders.0', {'topics': [{'name': 'orders', "
                     "'resolution': 'Provisioned', 'reason': ''}]})\n"
                     "import time; time.sleep(0.5)")
        fetched_one_snapshot(page, requests, before, "topic-orders.0")
        assert page.locator("#live-status").inner_text() == "live"
    finally:
        context.close()


def test_a_message_numbered_and_lost_is_fetched_at_the_next_beacon(browser, stack):
    """A sender killed between numbering a batch and sending it, and no change after: the
    socket's beacon says the group moved on, and the page fetches its snapshot."""
    context, page, requests, before = live_page(browser, stack, "/partitions/?topic=orders")
    try:
        stack.python("from cluster.adapters.live_batches import next_seq\n"
                     "next_seq('topic-orders.0')")
        fetched_one_snapshot(page, requests, before, "topic-orders.0")
    finally:
        context.close()


def test_a_change_between_the_render_and_the_socket_is_fetched_from_the_snapshot(browser,
                                                                              stack):
    context, page = logged_in_page(browser, stack)
    try:
        held: list = []
        # Hold live.js back: the page is rendered but has no socket yet.
        page.route(re.compile(r"/js/live\.js"), lambda route: held.append(route))
        requests: list[str] = []
        page.on("request", lambda r: requests.append(f"{r.resource_type} {r.url}"))
        page.goto("/", wait_until="commit")
        total = page.locator('[data-total="spus"]')
        total.wait_for(state="attached")
        before = int(total.text_content())
        for _ in range(200):
            if held:
                break
            page.wait_for_timeout(50)
        assert held, "the page never asked for live.js"
        # Rendered, not yet connected: a change now is announced to nobody on this page.
        stack.python("from cluster.services import spu_register\n"
                     "spu_register(spu_id=11, rack='rack-d')\n"
                     "import time; time.sleep(0.5)")
        held[0].continue_()
        page.wait_for_function("(n) => document.querySelector('[data-total=\"spus\"]')"
                               ".textContent === String(n)", arg=before + 1,
                               timeout=BROWSER_WAIT_MS)
        assert any("/api/live/snapshot/?group=cluster" in r for r in requests), requests
        assert [r for r in requests if r.startswith("document")] == ["document " + stack.url + "/"]
        assert "registered but never connected" in page.locator("[data-live-health]").inner_text()
    finally:
        context.close()


# An online follower of a partition whose LRS is full: taking it offline makes that
# partition under-replicated, whatever the tests before left offline.
FOLLOWER_OF_A_FULL_LRS = """
from cluster.models import Partition, Spu
online = set(Spu.objects.filter(resolution="Online").values_list("id", flat=True))
full = [p for p in Partition.objects.filter(topic__name="orders").order_by("index")
        if len(p.lrs) == len(p.replicas)]
print(next(s for p in full for s in p.replicas if s in online and s != p.leader))
"""


def test_the_topic_list_counts_and_the_partition_rows_hw_change_in_place(browser, stack):
    topics_ctx, topics = logged_in_page(browser, stack)
    rows_ctx, rows = logged_in_page(browser, stack)
    try:
        for page, url in ((topics, "/topics/"), (rows, "/partitions/?topic=orders")):
            page.goto(url)
            page.wait_for_function("() => window.liveState && window.liveState.open")
        loads = full_page_loads(topics), full_page_loads(rows)
        cell = 'tr[data-topic="orders"] [data-field="under_replicated"]'
        under = int(topics.locator(cell).inner_text())
        hw = 'tr[data-row="orders/0"] td.hw'
        before = int(rows.locator(hw).inner_text())

        stack.manage("produce", "orders", "--partition", "0", "--count", "5", "--acks", "all")
        rows.wait_for_function(f"(n) => Number(document.querySelector('{hw}').textContent) >= n",
                               arg=before + 5, timeout=BROWSER_WAIT_MS)
        spu = int(stack.python(FOLLOWER_OF_A_FULL_LRS).split()[-1])
        stack.manage("spu", "offline", str(spu))
        topics.wait_for_function(f"(n) => Number(document.querySelector('{cell}')"
                                 ".textContent) > n", arg=under, timeout=BROWSER_WAIT_MS)
        assert "warn" in topics.locator(cell).get_attribute("class")
        assert loads == ([], []), loads
    finally:
        topics_ctx.close()
        rows_ctx.close()


def test_the_healing_page_shows_an_anomaly_and_its_plan_as_they_happen(browser, stack):
    """Self-healing in notify-only mode on the stack's real beat: the SPU's anomaly appears,
    then its plan, on /healing/ without loading the page again."""
    stack.python("from healing.services import healing_enable, healing_set\n"
                 "healing_set(name='spu_down_alert_after_s', value='0')\n"
                 "healing_set(name='spu_down_heal_after_s', value='1')\n"
                 "healing_enable(notify_only=True)")
    context, page = logged_in_page(browser, stack)
    try:
        page.goto("/healing/")
        page.wait_for_function("() => window.healingLive && window.healingLive.open")
        loads = full_page_loads(page)
        stack.manage("spu", "offline", "5")
        row = page.locator("#open-anomalies tr[data-anomaly]", has_text="spu-5")
        row.locator("td", has_text="planned").wait_for(timeout=BROWSER_WAIT_MS)
        assert row.locator("a[href^='/planner/plans/']").count() == 1
        assert loads == [], loads
    finally:
        context.close()
