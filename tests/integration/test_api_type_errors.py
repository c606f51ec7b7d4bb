"""API refusals that name what was wrong with a count: its JSON type, not only "required".

The oversized body (413 in words) is in test_input_limits.py."""
from __future__ import annotations

import pytest

from cluster.models import Topic
from tests.helpers import register_spus

pytestmark = pytest.mark.django_db


@pytest.fixture
def three_spus(db):
    register_spus(0, 1, 2)


@pytest.mark.parametrize("key", ["partitions", "partition_count"])
@pytest.mark.parametrize("value, said", [("six", "the text 'six'"), (True, "true"),
                                         (1e30, "1e+30"), (2.5, "2.5"), ([1], "a list")])
def test_a_count_of_the_wrong_type_is_named(api, three_spus, key, value, said):
    response = api.post("/api/topics/", {"name": "t", key: value, "replication": 2},
                        format="json")
    assert response.status_code == 400
    assert response.json()["error"] == f"invalid input: {key}: must be a whole number, not {said}"
    assert not Topic.objects.exists()


def test_partitions_is_the_count_by_its_fluvio_name(api, three_spus):
    response = api.post("/api/topics/", {"name": "t", "partitions": 4, "replication": 2},
                        format="json")
    assert response.status_code == 201 and response.json()["partition_count"] == 4


def test_partitions_and_a_different_partition_count_are_refused(api, three_spus):
    response = api.post("/api/topics/", {"name": "t", "partitions": 4, "partition_count": 5,
                                         "replication": 2}, format="json")
    assert response.status_code == 400
    assert "differs from partition_count" in response.json()["error"]


def test_a_replication_of_true_is_named_not_taken_for_one(api, three_spus):
    response = api.post("/api/topics/", {"name": "t", "partitions": 1, "replication": True},
                        format="json")
    assert response.json()["error"] == \
        "invalid input: replication: must be a whole number, not true"
