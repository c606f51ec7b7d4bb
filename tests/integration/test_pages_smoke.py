"""Every page renders for both roles, empty and populated, and anonymous visitors go to login."""
from __future__ import annotations

import pytest

from tests.helpers import register_spus

PAGES = ["/", "/spus/", "/topics/", "/partitions/", "/heatmaps/", "/events/", "/planner/"]


@pytest.mark.parametrize("url", PAGES + ["/new-topic/", "/new-topic/upload/", "/api/docs/"])
def test_an_anonymous_visitor_is_sent_to_login(client, db, url):
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


@pytest.mark.parametrize("url", PAGES)
def test_every_page_shows_an_empty_state_with_a_hint(viewer_client, url):
    response = viewer_client.get(url)
    assert response.status_code == 200
    assert b'class="empty' in response.content


@pytest.mark.parametrize("url", PAGES + ["/topics/orders/", "/api/docs/"])
def test_every_page_renders_a_populated_cluster(operator_client, url):
    from cluster.services import topic_create

    register_spus(0, 1, 2, rack="rack-a", online=True)
    register_spus(3, 4, 5, rack="rack-b", online=True)
    topic_create(name="orders", partitions=6, replication=3)
    response = operator_client.get(url)
    assert response.status_code == 200, response.content[:2000]


def test_plotly_js_is_served_from_the_installed_package_without_login(client, db):
    response = client.get("/assets/plotly.min.js")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/javascript")
    assert b"plotly" in response.content[:2000].lower()
    assert "max-age" in response["Cache-Control"]
