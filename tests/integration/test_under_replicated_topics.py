"""The preview and the create result say which partitions start under-replicated and why."""
from __future__ import annotations

import json

import pytest

from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db]


@pytest.fixture
def half_online():
    register_spus(0, 1, online=True)
    register_spus(2, 3)


def test_the_api_dry_run_lists_the_partitions_and_the_offline_spus(api, half_online):
    response = api.post("/api/topics/", {"name": "t", "partition_count": 4, "replication": 2,
                                         "dry_run": True}, format="json")
    body = response.json()
    assert response.status_code == 200
    assert body["warning"].endswith("SPU 2, 3 are registered but not online")
    assert {u["partition"] for u in body["under_replicated"]} == {1, 2, 3}
    assert body["under_replicated"][0] == {"partition": 1, "offline_spus": [2],
                                           "live_replicas": 1,
                                           "reason": "SPU 2 is registered but not online"}


def test_the_create_result_says_it_in_a_warning_header(api, half_online):
    response = api.post("/api/topics/", {"name": "t", "partition_count": 4, "replication": 2},
                        format="json")
    assert response.status_code == 201 and response["Warning"] == (
        '199 - "3 of 4 partitions start under-replicated: '
        'SPU 2, 3 are registered but not online"')


def test_a_cluster_all_online_gets_no_warning(api):
    register_spus(0, 1, online=True)
    body = {"name": "t", "partition_count": 2, "replication": 2}
    preview = api.post("/api/topics/", {**body, "dry_run": True}, format="json").json()
    assert preview["warning"] == "" and preview["under_replicated"] == []
    assert "Warning" not in api.post("/api/topics/", body, format="json")


def test_the_command_prints_the_warning(half_online):
    out = run("topic", "create", "t", "-p", "4", "-r", "2", "--dry-run")
    assert "warning: 3 of 4 partitions start under-replicated" in out
    assert json.loads(run("topic", "create", "u", "-p", "4", "-r", "2", "--json"))["warning"]


def test_the_preview_page_shows_it_next_to_the_map(operator_client, half_online):
    page = operator_client.post("/new-topic/", {"name": "t", "partitions": 4, "replication": 2,
                                                "min_lrs": 1, "max_lag": 1000,
                                                "action": "preview"}).content.decode()
    assert 'id="under-replicated"' in page and "SPU 2, 3 are registered but not online" in page
