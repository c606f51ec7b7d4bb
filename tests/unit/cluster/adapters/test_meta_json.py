"""The meta's JSON reuses the text of its unchanged large parts and reads back exactly as
``json.dumps`` of the whole meta would, through in-place changes to those parts."""
from __future__ import annotations

import json
from dataclasses import replace

from cluster.adapters.meta_json import MetaParts, meta_texts
from cluster.core.replication import cluster_meta_to_dict, new_cluster


def plain(state, topics, checked, racks) -> dict:
    return json.loads(json.dumps({"core": cluster_meta_to_dict(state), "topics": topics,
                                  "checked": checked, "racks": racks, "adopted": {}}))


def meta_json(namespace, state, topics, checked, racks, *, parts=None) -> str:
    """The meta's two texts as the one-key meta ``plain`` spells out (the core's topics in
    the core, the tables as "topics"), to compare with it."""
    texts = meta_texts(namespace, state, topics, {}, checked, racks, parts=parts)
    small, rest = json.loads(texts.small), json.loads(texts.topics)
    assert small.pop("format") == 2 and small.pop("producers") == {}
    small.pop("topics_digest")
    small["core"]["topics"] = rest["configs"]
    return json.dumps({**small, "topics": rest["tables"]})


def topics_text(namespace, state, topics, *, parts=None) -> bytes:
    return meta_texts(namespace, state, topics, {}, None, {}, parts=parts).topics


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
    topics = {"t": {"pk": 1, "partitions": list(range(300))}}  # a list kept on its own
    parts = MetaParts()
    meta_json("a", state, topics, None, {}, parts=parts)
    frozen, _ = parts.texts[("a", "partitions", "t")]
    parts.texts[("a", "partitions", "t")] = (frozen, "[7]")  # what a reuse would show
    topics["t"]["pk"] = 2  # the table around it encoded again, the list's text not
    assert json.loads(meta_json("a", state, topics, None, {}, parts=parts))["topics"] == {
        "t": {"pk": 2, "partitions": [7]}}
    assert json.loads(meta_json("a", state, topics, None, {}))["topics"] == topics


def test_two_engines_keep_their_own_meta_parts():
    from cluster.adapters.set_cache import SetCache

    one, two = SetCache(), SetCache()
    meta_json("a", new_cluster([0]), {"t": {"pk": 1, "partitions": [1]}}, None, {},
              parts=one.meta)
    assert one.meta.texts and not two.meta.texts


def big_topics(first: int = 1000) -> dict:
    return {"big": {"pk": 1, "partitions": list(range(first, first + 2000)), "rate": 1.0},
            "small": {"pk": 2, "partitions": [5, 6], "rate": 0.0}}


def test_a_topics_text_this_process_wrote_reads_back_as_plain_json_without_parsing_its_large_parts():
    from cluster.adapters.meta_reading import meta_loads

    state, topics, parts = new_cluster([0, 1]), big_topics(), MetaParts()
    raw = topics_text("a", state, topics, parts=parts)
    got = meta_loads(raw, "a", parts)
    assert got == json.loads(raw)
    # Rebuilt from the kept value, not parsed: a kept value that differs shows through.
    frozen, text = parts.texts[("a", "partitions", "big")]
    parts.texts[("a", "partitions", "big")] = ((1, 2, 3), text)
    parts.encoded.clear()
    assert meta_loads(raw, "a", parts)["tables"]["big"]["partitions"] == [1, 2, 3]
    # A fresh list each time: the unit that loads it may change it in place.
    parts.texts[("a", "partitions", "big")] = (frozen, text)
    one, two = meta_loads(raw, "a", parts), meta_loads(raw, "a", parts)
    one["tables"]["big"]["partitions"].append(-1)
    assert two["tables"]["big"]["partitions"] == list(frozen)


def test_a_topics_text_another_process_wrote_since_is_parsed_as_it_stands():
    from cluster.adapters.meta_reading import meta_loads

    state, parts = new_cluster([0]), MetaParts()
    topics_text("a", state, big_topics(), parts=parts)
    theirs = topics_text("a", state, big_topics(first=5000))  # re-created
    assert meta_loads(theirs, "a", parts) == json.loads(theirs)
    assert meta_loads(theirs, "b", parts) == json.loads(theirs)  # another store's parts
    assert meta_loads(theirs, "a", None) == json.loads(theirs)


def test_a_kept_text_found_outside_a_topics_partitions_is_not_taken_for_them():
    from cluster.adapters.meta_reading import meta_loads

    state, parts = new_cluster([0]), MetaParts()
    mine = topics_text("a", state, big_topics(), parts=parts)
    _, text = parts.texts[("a", "partitions", "big")]
    # A topics text whose configs hold the very text, under the same key name.
    odd = json.loads(mine)
    odd["tables"]["big"]["partitions"] = [1]
    odd["configs"] = [{"name": "x", "partitions": json.loads(text)}]
    raw = json.dumps(odd).encode()
    assert meta_loads(raw, "a", parts) == odd


def test_each_topic_is_encoded_again_only_when_one_of_its_fields_changed():
    from cluster.core.replication import TopicConfig

    state = new_cluster([0, 1])
    state.topics["t"] = TopicConfig("t")
    state.topics["u"] = TopicConfig("u", min_lrs=2)
    topics = {"t": {"pk": 1, "partitions": [1, 2], "rate": 1.0, "last_ms": None},
              "u": {"pk": 2, "partitions": [3], "rate": 0.0}}
    parts = MetaParts()
    assert json.loads(meta_json("a", state, topics, None, {}, parts=parts)) == plain(
        state, topics, None, {})
    # Unchanged: the kept texts are what the meta holds (a reuse shows through). (Topic by
    # topic: the tables' whole text, kept too, is asked first.)
    parts.texts.pop(("a", "topics"))
    parts.texts.pop(("a", "configs"))
    frozen, _ = parts.texts[("a", "topic", "u")]
    parts.texts[("a", "topic", "u")] = (frozen, '{"kept": 1}')
    values, _ = parts.texts[("a", "config", "u")]
    parts.texts[("a", "config", "u")] = (values, '{"name": "u", "kept": 1}')
    got = json.loads(meta_json("a", state, topics, None, {}, parts=parts))
    assert got["topics"]["u"] == {"kept": 1}
    assert {"name": "u", "kept": 1} in got["core"]["topics"]
    # Changed in place, a field at a time: encoded again, as plain JSON has it.
    topics["u"]["rate"] = 2.5
    state.topics["u"] = replace(state.topics["u"], min_lrs=1)
    topics["t"]["last_ms"] = 7
    topics["t"]["rate"] = 1  # equal to 1.0, but another type: its own text
    got = json.loads(meta_json("a", state, topics, None, {}, parts=parts))
    assert got == plain(state, topics, None, {})
    assert isinstance(got["topics"]["t"]["rate"], int)


def test_the_kept_texts_of_dropped_topics_do_not_pile_up():
    from cluster.adapters import meta_json as module

    state, parts = new_cluster([0]), MetaParts()
    for i in range(module._MAX_PARTS):
        meta_json("a", state, {f"t{i}": {"pk": i, "partitions": [i]}}, None, {}, parts=parts)
    assert len(parts.texts) <= module._MAX_PARTS + 4


def test_the_tables_text_is_kept_whole_until_a_value_its_type_or_the_order_changes():
    topics = {"t": {"pk": 1, "partitions": [1, 2], "rate": 1.0, "last_ms": None},
              "u": {"pk": 2, "partitions": [3], "rate": 0.0, "last_ms": None}}
    state, parts = new_cluster([0]), MetaParts()

    def shown() -> dict:
        return json.loads(meta_json("a", state, topics, None, {}, parts=parts))["topics"]

    assert shown() == topics
    kept, _ = parts.texts[("a", "topics")]
    parts.texts[("a", "topics")] = (kept, '"kept": {}')  # what a reuse would show
    assert shown() == {"kept": {}}
    topics["u"]["partitions"].append(4)  # a list grown in place
    assert shown() == topics
    topics["t"] = topics.pop("t")  # the same tables, reordered
    assert list(shown()) == ["u", "t"]
    topics["t"]["rate"] = 1  # equal to 1.0, another type
    assert isinstance(shown()["t"]["rate"], int)
    topics["u"]["extra"] = [5]  # a field of a mutable type: never kept whole
    assert shown() == topics and ("a", "topics") not in parts.texts
    topics["u"]["extra"].append(6)  # changed in place
    assert shown() == topics


def test_the_configs_text_is_kept_whole_until_a_field_or_its_type_changes():
    from cluster.core.replication import TopicConfig

    state, parts = new_cluster([0]), MetaParts()
    state.topics["t"] = TopicConfig("t")
    state.topics["u"] = TopicConfig("u", min_lrs=2)

    def shown() -> list:
        return json.loads(meta_json("a", state, {}, None, {}, parts=parts))["core"]["topics"]

    assert shown() == plain(state, {}, None, {})["core"]["topics"]
    kept, _ = parts.texts[("a", "configs")]
    parts.texts[("a", "configs")] = (kept, '{"kept": 1}')  # what a reuse would show
    parts.parsed.clear()  # (the very same configs would take the whole text kept, below)
    assert shown() == [{"kept": 1}]
    state.topics["u"] = replace(state.topics["u"], min_lrs=1)
    assert shown() == plain(state, {}, None, {})["core"]["topics"]
    # equal to False, another type
    state.topics["u"] = replace(state.topics["u"], unclean_leader_election=0)
    assert shown()[1]["unclean_leader_election"] == 0
    assert shown()[1]["unclean_leader_election"] is not False


def test_the_very_configs_and_tables_a_kept_text_reads_back_as_take_that_text_unvisited():
    from cluster.core.replication import TopicConfig

    state, parts = new_cluster([0]), MetaParts()
    state.topics["t"] = TopicConfig("t")
    tables = {"t": {"pk": 1, "partitions": [1, 2], "rate": 1.0}}
    first = topics_text("a", state, tables, parts=parts)
    raw, configs, views = parts.parsed_topics("a", parts.parsed["a"].digest)
    assert raw == first
    # A load hands out the same views each time: a save of them is the kept text, whatever
    # the parts kept for each topic say (a value compare would encode from those).
    assert parts.parsed_topics("a", parts.parsed["a"].digest)[2]["t"] is views["t"]
    for name in list(parts.texts):
        parts.texts[name] = (parts.texts[name][0], "not looked at")
    state.topics = configs
    assert topics_text("a", state, views, parts=parts) is first
    # A table replaced by an equal one, a config changed, a topic renamed: compared, and
    # encoded again where it differs.
    parts.texts.clear()
    equal = {**views, "t": {"pk": 1, "partitions": [1, 2], "rate": 1.0}}
    assert topics_text("a", state, equal, parts=parts) == first
    state.topics = {"t": replace(configs["t"], min_lrs=2)}
    assert json.loads(topics_text("a", state, equal, parts=parts))["configs"][0]["min_lrs"] == 2
    renamed = {"u": views["t"]}
    state.topics = configs
    assert list(json.loads(topics_text("a", state, renamed, parts=parts))["tables"]) == ["u"]
