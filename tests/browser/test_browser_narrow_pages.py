"""Issue 35.7 (e): the plan page and the history diff fit a 390 px phone: nothing is wider
than the window (wide tables scroll inside their own box). Screenshots under var/screenshots/."""
from __future__ import annotations

import pytest
from django.test import Client

from tests.browser.test_browser_history import rack_outage  # noqa: F401  (a fixture)
from tests.helpers import register_spus

PHONE = {"width": 390, "height": 844}
REBALANCE = {"add_spu": "12:rack-a", "anti_affinity": "on", "leader_balance": "on",
             "order_optimisation": "on", "engine": "auto"}
# The elements wider than the window, for the failure message.
OVERFLOW = """() => [...document.querySelectorAll('body *')].filter(e => {
  const r = e.getBoundingClientRect();
  return r.right > window.innerWidth + 1 && !e.closest('.scroll, .chart, .js-plotly-plot');
}).slice(0, 8).map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' +
                    Math.round(e.getBoundingClientRect().right))"""


def _fits(page) -> None:
    wide = page.evaluate("() => document.documentElement.scrollWidth")
    assert wide <= PHONE["width"], page.evaluate(OVERFLOW)


@pytest.fixture
def plan_url(transactional_db, operator, monkeypatch) -> str:
    from cluster.models import ClusterState
    from cluster.services import topic_create
    from planner.models import Plan

    ClusterState.objects.get_or_create(pk=ClusterState.SINGLETON)
    for r, rack in enumerate(["rack-a", "rack-b", "rack-c", "rack-d"]):
        register_spus(*range(r * 3, r * 3 + 3), rack=rack)
    topic_create(name="orders-with-a-long-name", partitions=12, replication=3)
    monkeypatch.setattr("planner.services.worker_running", lambda: False)
    client = Client()
    client.force_login(operator)
    assert client.post("/planner/plans/new/", REBALANCE).status_code == 302
    return f"/planner/plans/{Plan.objects.get().pk}/"


def test_the_plan_page_fits_a_phone(new_page, operator, plan_url, shoot):
    page = new_page(operator, PHONE)
    page.goto(plan_url)
    page.wait_for_selector("#chart-replicas-after[data-drawn='1']", timeout=60_000)
    _fits(page)
    shoot(page, "plan-390")


@pytest.mark.redis
def test_the_history_diff_fits_a_phone(new_page, viewer, rack_outage, shoot):  # noqa: F811
    before, after = rack_outage
    page = new_page(viewer, PHONE)
    page.goto(f"/history/diff/?from={before}&to={after}")
    page.wait_for_selector("#diff-partitions")
    page.wait_for_function("() => [...document.querySelectorAll('.chart')]"
                           ".every(c => c.dataset.drawn === '1')", timeout=60_000)
    _fits(page)
    shoot(page, "history-diff-390")


@pytest.mark.redis
def test_a_running_plan_page_fits_a_phone(new_page, operator, plan_url, redis_url, shoot):
    from cluster.models import Spu
    from cluster.services import spu_connect, spu_register

    spu_register(spu_id=12, rack="rack-a")
    for spu_id in Spu.objects.values_list("id", flat=True):
        spu_connect(spu_id=spu_id)
    client = Client()
    client.force_login(operator)
    applied = client.post(plan_url + "apply/", {"max_moves_per_spu": "5", "max_moves": "50",
                                                "throttle_bytes_per_s": "10485760",
                                                "confirm": "on"})
    assert applied.status_code == 302, applied.content[:500]
    page = new_page(operator, PHONE)
    page.goto(plan_url)
    page.wait_for_selector("#apply-status")
    page.wait_for_selector("#chart-replicas-after[data-drawn='1']", timeout=60_000)
    _fits(page)
    shoot(page, "plan-running-390")
