"""A burst bigger than max lag, through the produce command, keeps a healthy LRS whole."""
from __future__ import annotations

import json

import pytest

from cluster.services.waiting import wait_replicated

from tests.helpers import register_spus, run

pytestmark = [pytest.mark.django_db, pytest.mark.redis]


def test_an_acks_all_burst_of_2000_with_min_lrs_2_is_acknowledged_by_all_three(redis_url):
    register_spus(0, 1, 2, online=True)
    run("topic", "create", "t", "-p", "1", "-r", "3", "--min-lrs", "2", "--max-lag", "1000")
    out = json.loads(run("produce", "t", "--count", "2000", "--acks", "all", "--json"))
    row = json.loads(run("partition", "list", "--topic", "t", "--json"))[0]
    assert out["state"] == "acknowledged"
    assert sorted(row["lrs"]) == [0, 1, 2] and row["hw"] == 2000


def test_a_topic_created_while_its_spus_were_down_starts_on_the_ones_that_return(
        redis_url, tmp_path):
    register_spus(0, 4, 5)
    for spu in (0, 4, 5):
        run("spu", "offline", str(spu))
    path = tmp_path / "map.json"
    path.write_text(json.dumps([{"id": 0, "replicas": [0, 4, 5]}]))
    run("topic", "create", "t", "--replica-assignment", str(path))
    assert wait_replicated("t")  # the engine holds it while every replica is down
    run("spu", "online", "4")
    run("spu", "online", "5")
    assert "record(s)" in run("produce", "t", "--count", "1", "--acks", "all")
    row = json.loads(run("partition", "list", "--topic", "t", "--json"))[0]
    assert row["resolution"] == "Online" and row["leader"] in (4, 5)
