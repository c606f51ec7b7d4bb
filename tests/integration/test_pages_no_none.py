"""Issue 35.4/35.7: no page says "None" where a value is missing (a template printing a
Python None, "(None)" in a label): every page of a cluster with the gaps a real one has
(an SPU without a rack, one offline, a closed anomaly that never had a plan, a network
cut and its report, events of every kind)."""
from __future__ import annotations

import re

import pytest
from django.utils import timezone

from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]
PAGES = ("/", "/spus/", "/topics/", "/topics/orders/", "/partitions/", "/heatmaps/",
         "/events/", "/healing/", "/history/", "/net/report/", "/planner/", "/planner/imports/",
         "/new-topic/", "/history/?at=2", "/history/diff/?from=1&to=6",
         "/spus/?resolution=Offline")


def _visible_text(html: str) -> str:
    """The page as read: no scripts or styles, no tags; attribute values (titles,
    aria labels) kept, since they are read too."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    # The English word is fine where it starts a sentence ("None: no acknowledged write ...").
    html = re.sub(r">None([.:])", r">Nothing\1", html)
    attributes = " ".join(re.findall(r'(?:title|aria-label|placeholder|value)="([^"]*)"', html))
    return re.sub(r"<[^>]+>", " ", html) + " " + attributes


@pytest.fixture
def gappy_cluster(redis_url):
    from cluster.services.events import log_event
    from healing.models import Anomaly

    register_spus(0, 1, rack="rack-a", online=True)
    register_spus(2, 3, rack="rack-b", online=True)
    register_spus(4, online=True)
    run("topic", "create", "orders", "--partitions", "4", "--replication", "2",
        "--ignore-rack-assignment")
    run("spu", "offline", "2")
    run("net", "cut", "--spu", "3")
    # An automatic action's event before its anomaly had a plan.
    log_event("self-healing", "anomaly", 1, "detected",
              {"type": "spu_down", "subject": "spu-2", "plan": None, "preempted_by": None})
    Anomaly.objects.create(type="spu_down", subject="spu-2", state="cancelled",
                           detected_at=timezone.now(), finished_at=timezone.now())
    Anomaly.objects.create(type="spu_down", subject="spu-3", state="detected",
                           detected_at=timezone.now())


@pytest.mark.parametrize("url", PAGES)
def test_no_page_prints_none_for_a_missing_value(operator_client, gappy_cluster, url):
    page = operator_client.get(url)
    assert page.status_code == 200, (url, page.status_code)
    html = page.content.decode()
    if url.startswith("/history/diff/"):
        assert 'id="diff-summary"' in html, "the diff was not drawn: nothing was checked"
    text = _visible_text(html)
    found = [text[max(0, m.start() - 60):m.end() + 60]
             for m in re.finditer(r"\bNone\b|\bnull\b|\bundefined\b", text)]
    assert not found, found
