"""The meta is two keys: a small one that every produce and producer run changes, and the
topics', which changes only with the topics and which this process reads back from what it
wrote instead of parsing it again. A meta of one key (before the split) still reads."""
from __future__ import annotations

import json

from cluster.adapters.meta_json import MetaParts, meta_texts
from cluster.adapters.meta_reading import read_meta, topic_names
from cluster.core.replication import TopicConfig, cluster_meta_to_dict, new_cluster


def cluster():
    state = new_cluster([0, 1, 2])
    state.topics["orders"] = TopicConfig("orders", min_lrs=2, lag_time_max_ms=500)
    state.topics["audit"] = TopicConfig("audit", unclean_leader_election=True)
    state.next_record_id = 41
    tables = {"orders": {"pk": 7, "partitions": list(range(100, 400)), "rate": 2.5},
              "audit": {"pk": 8, "partitions": [9, 10], "rate": 0.0}}
    producers = {"orders": {"last_ms": 1000, "carry": 0.5, "next": 3}}
    return state, tables, producers


def written(parts=None, namespace="s"):
    state, tables, producers = cluster()
    texts = meta_texts(namespace, state, tables, producers, "run-1", {"0": "r1"},
                       {"offset": 4}, parts=parts)
    return state, tables, producers, texts.small.encode(), texts.topics.encode()


def test_the_two_keys_read_back_as_the_meta_they_were_written_from():
    state, tables, producers, small, topics = written()
    # Another process reads them (no parts of its own): parsed.
    meta = read_meta(small, topics, "s", None)
    assert meta.configs == state.topics and meta.tables == tables
    assert meta.producers == producers
    assert (meta.checked, meta.racks, meta.adopted) == ("run-1", {"0": "r1"}, {"offset": 4})
    assert meta.core == json.loads(json.dumps(cluster_meta_to_dict(state, topics=False)))
    # The small key holds neither the topics nor their tables.
    assert b"orders" in small and b'"partitions"' not in small and b"min_lrs" not in small
    assert topic_names(small, topics) == {"orders", "audit"}


def test_a_produce_changes_the_small_key_and_not_the_topics_one():
    parts = MetaParts()
    state, tables, producers, small, topics = written(parts)
    state.next_record_id += 1
    producers["orders"]["next"] = 4
    again = meta_texts("s", state, tables, producers, "run-1", {"0": "r1"}, {"offset": 4},
                       parts=parts)
    assert again.topics.encode() == topics and again.small.encode() != small


def test_the_topics_text_this_process_wrote_is_read_back_from_its_values_not_parsed():
    parts = MetaParts()
    state, tables, _, small, topics = written(parts)
    raw, configs, kept = parts.parsed["s"]
    assert raw == topics
    # A value changed in what the process kept shows through: it was not parsed.
    kept["audit"] = {**kept["audit"], "rate": 9.0}
    assert read_meta(small, topics, "s", parts).tables["audit"]["rate"] == 9.0
    kept["audit"]["rate"] = 0.0
    one, two = read_meta(small, topics, "s", parts), read_meta(small, topics, "s", parts)
    assert one.tables == tables and one.configs == state.topics
    # Fresh objects each time: the unit that loads them changes them in place.
    one.tables["orders"]["partitions"].append(-1)
    one.tables["audit"]["rate"] = 3.0
    one.configs["orders"].min_lrs = 1
    assert two.tables == tables and two.configs == state.topics
    assert read_meta(small, topics, "s", parts).tables == tables


def test_a_topics_text_that_is_not_the_one_kept_is_parsed():
    parts = MetaParts()
    state, tables, _, small, topics = written(parts)
    tables["audit"]["rate"] = 1.0
    theirs = meta_texts("s", state, tables, {}, None, {}).topics.encode()  # another process
    assert read_meta(small, theirs, "s", parts).tables["audit"]["rate"] == 1.0
    # Another store's parts are not this one's.
    assert parts.parsed_topics("t", topics) is None


def test_tables_with_a_field_of_a_mutable_type_are_not_kept_as_their_parse():
    parts = MetaParts()
    state, tables, _ = cluster()
    tables["audit"]["extra"] = [1]
    meta_texts("s", state, tables, {}, None, {}, parts=parts)
    assert "s" not in parts.parsed


def test_a_meta_of_one_key_reads_with_the_producers_taken_out_of_its_tables():
    state, tables, producers = cluster()
    old = {"core": cluster_meta_to_dict(state), "topics": {
        name: {**table, **producers.get(name, {})} for name, table in tables.items()},
        "checked": "run-0", "racks": {}, "adopted": {}}
    raw = json.dumps(old).encode()
    meta = read_meta(raw, None, "s", MetaParts())
    assert meta.tables == tables and meta.producers == producers
    assert meta.configs == state.topics and "topics" not in meta.core
    assert meta.checked == "run-0"
    assert topic_names(raw, None) == {"orders", "audit"}


def test_the_kept_parses_are_bounded_by_store():
    parts = MetaParts()
    for i in range(10):
        written(parts, namespace=f"s{i}")
    assert list(parts.parsed) == ["s6", "s7", "s8", "s9"]
