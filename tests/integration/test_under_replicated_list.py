"""The under-replicated partition list walks the topics the kept counts name, in list order
(topic name, then index), reading only the topics a page reaches: every page must hold
the rows the filter on the rows themselves gives, across topic boundaries."""
from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from cluster.models import Partition
from tests.helpers import recount_partitions, register_spus, run

pytestmark = [pytest.mark.django_db]

# topic -> partitions whose LRS loses a member (created in another order than listed)
HIT = {"bravo": [0, 2, 3, 4], "alpha": [1], "delta": [], "charlie": [0, 1, 2]}


@pytest.fixture
def hit(db):
    register_spus(0, 1, 2, online=True)
    for name in HIT:
        run("topic", "create", name, "-p", "5", "-r", "2")
    for name, indexes in HIT.items():
        for p in Partition.objects.filter(topic__name=name, index__in=indexes):
            Partition.objects.filter(pk=p.pk).update(lrs=p.replicas[:1])
    recount_partitions()


def expected(topic: str = "") -> list[tuple[str, int]]:
    return [(name, i) for name in sorted(HIT) for i in HIT[name] if topic in ("", name)]


def listed(api, query: str, limit: int) -> tuple[int, list[tuple[str, int]]]:
    rows, offset, count = [], 0, None
    while True:
        page = api.get(f"/api/partitions/?under_replicated=1{query}&limit={limit}"
                       f"&offset={offset}").json()
        count = page["count"]
        rows += [(r["topic"], r["partition"]) for r in page["results"]]
        if not page["results"]:
            return count, rows
        offset += limit


@pytest.mark.parametrize("limit", [1, 2, 3, 100])
def test_pages_of_under_replicated_partitions_follow_topic_then_index(api, hit, limit):
    assert listed(api, "", limit) == (8, expected())


def test_one_topics_under_replicated_partitions(api, hit):
    assert listed(api, "&topic=charlie", 2) == (3, expected("charlie"))
    assert listed(api, "&topic=delta", 2) == (0, [])


def test_the_page_lists_them_and_other_filters_still_combine(operator_client, api, hit):
    html = operator_client.get("/partitions/?under_replicated=1").content.decode()
    assert html.index('data-row="alpha/1"') < html.index('data-row="bravo/0"') \
        < html.index('data-row="charlie/2"')
    assert 'data-row="delta/' not in html
    both = api.get("/api/partitions/?under_replicated=1&spu=0&limit=100").json()["results"]
    assert all(0 in r["replicas"] and len(r["lrs"]) < len(r["replicas"]) for r in both)


def test_a_page_measures_only_the_topics_it_reaches(api, hit):
    with CaptureQueriesContext(connection) as ctx:
        api.get("/api/partitions/?under_replicated=1&limit=1")
    sql = " ".join(q["sql"] for q in ctx.captured_queries if "array_length" in q["sql"])
    alpha = Partition.objects.filter(topic__name="alpha").values_list("topic_id", flat=True)[0]
    assert f"IN ({alpha})" in sql
