"""History links land on the event, not the moment before it (issue 35 item 4): markers and
the events page's "view" link go by log offset; a moment before history is refused."""
from __future__ import annotations

import re

import pytest

from cluster.adapters import metadata_log
from cluster.ports import bound_to_store
from cluster.models import Event
from history import checkpoints
from history.markers import markers
from history.present import moment_view
from history.selectors import parse_point
from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def head() -> int:
    with bound_to_store():
        return metadata_log.head()


def offline_at(text: str) -> int:
    return moment_view(parse_point(text))["totals"]["spus_offline"]


@pytest.fixture
def outages(redis_url, settings):
    settings.HISTORY_HW_INTERVAL_S = 0
    checkpoints.forget()
    register_spus(0, 1, rack="r1", online=True)
    register_spus(2, 3, rack="r2", online=True)
    run("topic", "create", "t", "-p", "4", "-r", "2")
    run("produce", "t", "--count", "2", "--acks", "all")
    run("spu", "offline", "0")
    run("spu", "kill", "1")
    run("rack", "offline", "r2")


def test_every_marker_lands_by_offset_where_its_change_is_seen(outages):
    marks = markers(None)
    assert all(m["moment"].isdigit() and m["before"].isdigit() for m in marks), marks
    outages = [m for m in marks if m["kind"] == "outage"]
    # SPU 0 offline (and SPU 1's loop killed); then SPU 1's session lost with rack r2 offline.
    assert [offline_at(m["moment"]) for m in outages] == [1, 4]
    assert [offline_at(m["before"]) for m in outages] == [0, 1]


def test_the_events_pages_view_links_land_on_their_event(outages, operator_client):
    page = operator_client.get("/events/?object_type=spu").content.decode()
    links = re.findall(r'href="/history/\?at=([^"]+)">view</a>', page)
    assert links and all(link.isdigit() for link in links), links
    assert max(offline_at(link) for link in links) == 4



def test_a_moment_before_history_begins_is_refused_saying_so(outages, operator_client):
    page = operator_client.get("/history/?at=2020-01-01T00:00:00Z")
    assert page.status_code == 400 and b"history begins at offset" in page.content
    answer = operator_client.get("/api/history/?at=2020-01-01T00:00:00Z")
    assert answer.status_code == 400 and "history begins at offset" in answer.json()["error"]
    diff = operator_client.get(f"/history/diff/?from=2020-01-01T00:00:00Z&to={head()}")
    assert diff.status_code == 400 and b"history begins at offset" in diff.content


def test_a_huge_offset_is_said_to_be_too_large(outages, operator_client):
    answer = operator_client.get(f"/api/history/?at={'9' * 30}")
    assert answer.status_code == 400 and "too large" in answer.json()["error"]


def test_no_text_says_none(outages, operator_client):
    diff = operator_client.get(f"/history/diff/?from=0&to={head()}")
    page = operator_client.get("/history/?at=0")
    assert diff.status_code == page.status_code == 200
    assert b"(None)" not in diff.content and b"(None)" not in page.content
    out = run("history", "bounds")
    assert "None" not in out


def test_a_link_by_event_id_lands_on_the_entry_that_carried_its_change(outages,
                                                                       operator_client):
    """What a live row links to when its event was written directly (static/js/live.js)."""
    event = Event.objects.get(object_type="rack", operation="offline")
    response = operator_client.get(f"/history/?event={event.pk}")
    assert response.status_code == 302
    at = response["Location"].split("?at=")[1]
    assert at.isdigit() and offline_at(at) == 4
