"""/history/, /history/diff/ and /api/history/: viewers read them, anonymous visitors do not,
bad moments are refused with the reason, and the API answers what its schema documents."""
from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from cluster.adapters import metadata_log
from cluster.ports import bound_to_store
from cluster.models import Event
from history import checkpoints
from tests.helpers import register_spus, run
from tests.integration.test_api_schema import check

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def head() -> int:
    with bound_to_store():
        return metadata_log.head()


@pytest.fixture
def outage(redis_url, settings):
    """Before and after SPU 0 went offline: two offsets."""
    settings.HISTORY_HW_INTERVAL_S = 0
    checkpoints.forget()
    register_spus(0, 1, 2, rack="r1", online=True)
    run("topic", "create", "t", "-p", "3", "-r", "2")
    run("produce", "t", "--count", "2", "--acks", "all")  # replicated by then
    before = head()
    run("spu", "offline", "0")
    return before, head()


def test_a_viewer_reads_the_page_the_diff_and_the_api(outage, viewer):
    before, after = outage
    client = APIClient()
    client.force_login(viewer)
    page = client.get(f"/history/?at={before}")
    assert page.status_code == 200 and b"History begins at offset 0" in page.content
    assert b'id="chart-leaders"' in page.content
    diff = client.get(f"/history/diff/?from={before}&to={after}")
    assert diff.status_code == 200 and b"data-changed=\"leader" in diff.content
    body = client.get(f"/api/history/?at={after}&charts=1").json()
    offline = {s["spu"] for s in body["spus"] if s["state"] == "offline"}
    assert offline == {0} and body["moment"]["offset"] == after
    assert set(body["charts"]) == {"chart-leaders", "chart-followers", "chart-topics"}
    moved = client.get(f"/api/history/diff/?from={before}&to={after}").json()
    assert moved["counts"]["leader"] == sum(
        1 for r in moved["partitions"] if r["leader"]["from"] == 0) > 0


def test_anonymous_visitors_are_refused(outage, client):
    assert client.get("/history/").status_code == 302
    assert APIClient().get("/api/history/").status_code in (401, 403)
    assert APIClient().get("/api/history/diff/?from=0&to=1").status_code in (401, 403)


def test_bad_moments_are_refused_with_the_reason(outage, api):
    response = api.get("/api/history/?at=last-tuesday")
    assert response.status_code == 400 and "ISO 8601" in response.json()["error"]
    assert api.get("/api/history/diff/?from=1").status_code == 400
    assert api.get("/api/history/?size=0").status_code == 400


def test_the_api_answers_what_the_schema_documents(outage, api):
    schema = json.loads(api.get("/api/schema/?format=json").content)
    before, after = outage
    for path in (f"/api/history/?at={before}&charts=1", "/api/history/?at=x",
                 f"/api/history/diff/?from={before}&to={after}", "/api/history/diff/?to=1"):
        check(schema, api.get(path), "get", path)


def test_every_event_links_to_its_moment(outage, operator_client):
    page = operator_client.get("/events/")
    offset = Event.objects.exclude(log_offset=None).values_list("log_offset", flat=True).first()
    assert f'href="/history/?at={offset}"'.encode() in page.content
