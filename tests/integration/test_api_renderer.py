"""The topic description's faster JSON encoder writes DRF's bytes (cluster/api/renderers.py,
issue 33: the 50,000-partition answer's CPU)."""
from __future__ import annotations

import datetime
import decimal

import pytest
from rest_framework.renderers import JSONRenderer

from cluster.api.renderers import FastJSONRenderer
from tests.helpers import register_spus

ANSWERS = [
    {"name": "t", "partitions": [{"id": i, "replicas": [i, i + 1, 2**40]} for i in range(50)],
     "reason": "é漢 a\u2028b\u2029c \x01\n\t\"\\/</script>", "manual": False, "min_lrs": None},
    [1, 2.5, 0.1 + 0.2, 1e16, -0.0, True, None, "", {}, []],
    {"n": decimal.Decimal("1.10")},
    {"when": datetime.date(2026, 11, 28), "set": {1}},  # ujson refuses: DRF's renderer
    {"nan": float("nan")},
]


@pytest.mark.parametrize("data", ANSWERS)
@pytest.mark.parametrize("media", ["application/json", "application/json; indent=2"])
def test_the_bytes_are_drfs(data, media):
    try:
        expected = JSONRenderer().render(data, media, {})
    except ValueError:  # NaN: refused by both
        with pytest.raises(ValueError):
            FastJSONRenderer().render(data, media, {})
        return
    assert FastJSONRenderer().render(data, media, {}) == expected


def test_the_topic_description_is_the_same_answer(api):
    register_spus(0, 1, 2)
    assert api.post("/api/topics/", {"name": "orders", "partition_count": 40,
                                     "replication": 3}, format="json").status_code == 201
    got = api.get("/api/topics/orders/")
    assert got.status_code == 200 and got["Content-Type"] == "application/json"
    body = got.json()
    assert [p["id"] for p in body["partitions"]] == list(range(40))
    from cluster.models import Topic
    from cluster.selectors.shapes import topic_describe
    assert got.content == JSONRenderer().render(
        topic_describe(Topic.objects.get(name="orders")), "application/json", {})
