"""The meta's JSON reuses the text of its unchanged large parts and reads back exactly as
``json.dumps`` of the whole meta would, through in-place changes to those parts."""
from __future__ import annotations

import json

from cluster.adapters.meta_json import meta_json
from cluster.core.replication import cluster_meta_to_dict, new_cluster


def plain(state, topics, checked, racks) -> dict:
    return json.loads(json.dumps({"core": cluster_meta_to_dict(state), "topics": topics,
                                  "checked": checked, "racks": racks, "adopted": {}}))


def test_the_meta_reads_back_as_plain_json_through_changes_made_in_place():
    state = new_cluster([0, 1, 2])
    state.connections.update({(1, 0), (2, 0)})
    topics = {"orders": {"pk": 7, "partitions": [11, 12, 13], "rate": 2.5, "last_ms": None},
              "a \"quoted\" name": {"pk": 8, "partitions": []}}
    assert json.loads(meta_json("s1", state, topics, "run-1", {"0": "r1"})) == plain(
        state, topics, "run-1", {"0": "r1"})
    topics["orders"]["partitions"].append(14)  # the same list, grown in place
    state.connections.add((0, 1))  # the same set, grown in place
    state.next_record_id = 99
    got = json.loads(meta_json("s1", state, topics, None, {}))
    assert got == plain(state, topics, None, {})
    assert got["topics"]["orders"]["partitions"] == [11, 12, 13, 14]
    assert got["core"]["connections"] == [[0, 1], [1, 0], [2, 0]]


def test_two_stores_with_a_topic_of_the_same_name_keep_their_own_parts():
    state = new_cluster([0])
    one = {"t": {"pk": 1, "partitions": [1, 2]}}
    two = {"t": {"pk": 2, "partitions": [3, 4, 5]}}
    assert json.loads(meta_json("a", state, one, None, {}))["topics"] == one
    assert json.loads(meta_json("b", state, two, None, {}))["topics"] == two
    assert json.loads(meta_json("a", state, one, None, {}))["topics"] == one
