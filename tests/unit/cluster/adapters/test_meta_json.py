"""The meta's JSON reuses the text of its unchanged large parts and reads back exactly as
``json.dumps`` of the whole meta would, through in-place changes to those parts."""
from __future__ import annotations

import json

from cluster.adapters.meta_json import MetaParts, meta_json
from cluster.core.replication import cluster_meta_to_dict, new_cluster


def plain(state, topics, checked, racks) -> dict:
    return json.loads(json.dumps({"core": cluster_meta_to_dict(state), "topics": topics,
                                  "checked": checked, "racks": racks, "adopted": {}}))


def test_the_meta_reads_back_as_plain_json_through_changes_made_in_place():
    state = new_cluster([0, 1, 2])
    state.connections.update({(1, 0), (2, 0)})
    topics = {"orders": {"pk": 7, "partitions": [11, 12, 13], "rate": 2.5, "last_ms": None},
              "a \"quoted\" name": {"pk": 8, "partitions": []}}
    parts = MetaParts()
    assert json.loads(meta_json("s1", state, topics, "run-1", {"0": "r1"}, parts=parts)) \
        == plain(state, topics, "run-1", {"0": "r1"})
    topics["orders"]["partitions"].append(14)  # the same list, grown in place
    state.connections.add((0, 1))  # the same set, grown in place
    state.next_record_id = 99
    got = json.loads(meta_json("s1", state, topics, None, {}, parts=parts))
    assert got == plain(state, topics, None, {})
    assert got["topics"]["orders"]["partitions"] == [11, 12, 13, 14]
    assert got["core"]["connections"] == [[0, 1], [1, 0], [2, 0]]


def test_two_stores_with_a_topic_of_the_same_name_keep_their_own_parts():
    state = new_cluster([0])
    one = {"t": {"pk": 1, "partitions": [1, 2]}}
    two = {"t": {"pk": 2, "partitions": [3, 4, 5]}}
    parts = MetaParts()
    assert json.loads(meta_json("a", state, one, None, {}, parts=parts))["topics"] == one
    assert json.loads(meta_json("b", state, two, None, {}, parts=parts))["topics"] == two
    assert json.loads(meta_json("a", state, one, None, {}, parts=parts))["topics"] == one


def test_an_unchanged_part_is_taken_from_the_parts_given_not_encoded_again():
    state = new_cluster([0])
    topics = {"t": {"pk": 1, "partitions": [1, 2]}}
    parts = MetaParts()
    meta_json("a", state, topics, None, {}, parts=parts)
    frozen, _ = parts.texts[("a", "partitions", "t")]
    parts.texts[("a", "partitions", "t")] = (frozen, "[7]")  # what a reuse would show
    assert json.loads(meta_json("a", state, topics, None, {}, parts=parts))["topics"] == {
        "t": {"pk": 1, "partitions": [7]}}
    assert json.loads(meta_json("a", state, topics, None, {}))["topics"] == topics


def test_two_engines_keep_their_own_meta_parts():
    from cluster.adapters.set_cache import SetCache

    one, two = SetCache(), SetCache()
    meta_json("a", new_cluster([0]), {"t": {"pk": 1, "partitions": [1]}}, None, {},
              parts=one.meta)
    assert one.meta.texts and not two.meta.texts
