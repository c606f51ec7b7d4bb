"""``GET /api/topics/`` answers summaries by default, replica maps only when asked for and
then a bounded number per page (issue 36 item 4: 3.4 MB of maps per page at 100,000
partitions); ``GET /api/topics/<name>/`` keeps the whole describe shape."""
from __future__ import annotations

import pytest

from cluster.services import topic_create
from tests.helpers import register_spus

pytestmark = pytest.mark.django_db
SUMMARY_KEYS = {"name", "resolution", "reason", "partition_count", "replication",
                "ignore_rack_assignment", "min_lrs", "max_lag", "unclean_leader_election",
                "manual"}


@pytest.fixture
def big_topics(db):
    register_spus(0, 1, 2)
    for name in ("a", "b", "c"):
        topic_create(name=name, partitions=3000, replication=2, ignore_racks=True)


def test_the_list_answers_summaries_without_replica_maps(api, big_topics):
    response = api.get("/api/topics/")
    body = response.json()
    assert response.status_code == 200 and body["count"] == 3
    assert [set(t) for t in body["results"]] == [SUMMARY_KEYS] * 3
    assert body["results"][0]["partition_count"] == 3000
    assert len(response.content) < 3000  # the three maps alone are 3 x 3,000 lists


def test_the_maps_come_when_asked_and_a_page_holds_a_bounded_number(api, big_topics,
                                                                    monkeypatch):
    monkeypatch.setattr("cluster.api.topic_list.MAX_PAGE_PARTITIONS", 5000)
    first = api.get("/api/topics/?fields=name,partitions").json()
    (topic,) = first["results"]
    assert set(topic) == {"name", "partitions"} and len(topic["partitions"]) == 3000
    assert topic["partitions"][0] == {"id": 0, "replicas": [0, 1]}
    assert first["count"] == 3 and "offset=1" in first["next"]
    second = api.get(first["next"]).json()
    assert [t["name"] for t in second["results"]] == ["b"]


def test_unknown_fields_are_refused_naming_them(api, big_topics):
    response = api.get("/api/topics/?fields=name,bogus")
    assert response.status_code == 400 and "bogus" in response.json()["error"]


def test_the_detail_keeps_the_replica_map(api, big_topics):
    body = api.get("/api/topics/a/").json()
    assert set(body) == SUMMARY_KEYS | {"partitions"} and len(body["partitions"]) == 3000
