"""Partition lists read each row's topic name only, never the topic's whole replica map
(which made a page of a 100,000-partition topic decode 100 maps of 100,000 entries)."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def topic(db):
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "-p", "30", "-r", "3")


def selected_sql(client, url: str) -> str:
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return " ".join(q["sql"] for q in ctx.captured_queries)


@pytest.mark.parametrize("url", ["/api/partitions/", "/api/partitions/?topic=t",
                                 "/partitions/", "/partitions/?topic=t"])
def test_a_page_of_partitions_never_loads_the_topics_replica_map(operator_client, topic, url):
    sql = selected_sql(operator_client, url)
    assert '"cluster_partition"."replicas"' in sql
    assert '"cluster_topic"."replica_map"' not in sql
    assert '"cluster_topic"."manual_replica_map"' not in sql


def test_the_rows_still_name_their_topic(operator_client, topic):
    rows = operator_client.get("/api/partitions/?topic=t&limit=3").json()["results"]
    assert [(r["topic"], r["partition"]) for r in rows] == [("t", 0), ("t", 1), ("t", 2)]


def test_partition_list_json_never_loads_the_replica_map(topic, redis_url):
    with CaptureQueriesContext(connection) as ctx:
        run("partition", "list", "--json")
    assert not any('"cluster_topic"."replica_map"' in q["sql"] for q in ctx.captured_queries)
