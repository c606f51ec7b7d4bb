"""An API answer is freed when the server drops it, not left to the cyclic GC (issue 33).

DRF ties a response into cycles (the view keeps it, its renderer context keeps the view
and itself), so a topic's 50,000-partition answer was 100,000 containers that waited for
a collection, and that collection's pause fell on a later request's p99.
"""
from __future__ import annotations

import gc
import json
import weakref

import pytest
from rest_framework.test import APIRequestFactory, force_authenticate

from cluster.api import views
from tests.helpers import register_spus


@pytest.fixture
def orders(api, redis_url):
    # With Redis: the partitions list reads its offsets from the hot state, and a Redis that
    # cannot be reached leaves an error whose frames (and the answer with them) wait for a
    # collection, a fallback, not the path to measure.
    register_spus(0, 1, 2)
    assert api.post("/api/topics/", {"name": "orders", "partition_count": 30,
                                     "replication": 3}, format="json").status_code == 201


@pytest.mark.parametrize("view, kwargs, url", [
    (views.TopicDetailView, {"name": "orders"}, "/api/topics/orders/"),
    (views.TopicListView, {}, "/api/topics/"),
    (views.PartitionListView, {}, "/api/partitions/"),
])
def test_a_dropped_answer_is_freed_by_reference_counting(operator, orders, view, kwargs, url):
    request = APIRequestFactory().get(url)
    force_authenticate(request, user=operator)
    was = gc.isenabled()
    gc.disable()  # only reference counting may free it
    try:
        response = views.as_api(view)(request, **kwargs)
        assert response.status_code == 200 and response.content
        freed = weakref.ref(response)
        del response
        assert freed() is None, "the answer is held in a cycle until a collection"
    finally:
        if was:
            gc.enable()


def test_a_rendered_answer_keeps_its_bytes_not_its_data(operator, orders):
    # Its containers are freed while the collector is paused, so no collection scans them.
    request = APIRequestFactory().get("/api/topics/orders/")
    force_authenticate(request, user=operator)
    response = views.as_api(views.TopicDetailView)(request, name="orders")
    assert response.status_code == 200 and response.data is None
    body = json.loads(response.content)
    assert [p["id"] for p in body["partitions"]] == list(range(30))
    assert body["partition_count"] == 30 and all(len(p["replicas"]) == 3
                                                 for p in body["partitions"])
