"""The meta is two keys: a small one that every produce and producer run changes, and the
topics', which changes only with the topics. A process that wrote the topics' text last
neither reads nor parses it again: the small key names it by its digest. A meta of one
key (before the split) still reads."""
from __future__ import annotations

import json
from dataclasses import FrozenInstanceError

import pytest

from cluster.adapters.meta_json import MetaParts, digest, meta_texts
from cluster.adapters.meta_reading import read_meta
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
    return state, tables, producers, texts.small, texts.topics


class Store:
    """The two keys as Redis holds them; counts the reads of both together."""

    def __init__(self, small: bytes, topics: bytes | None) -> None:
        self.keys, self.reads = (small, topics), 0

    def both(self) -> tuple[bytes, bytes | None]:
        self.reads += 1
        return self.keys


def read(small, topics, parts, namespace="s"):
    store = Store(small, topics)
    meta, small_read, topics_read = read_meta(small, namespace, parts, store.both)
    assert (small_read, topics_read) == (small, topics)
    return meta, store.reads


def test_the_two_keys_read_back_as_the_meta_they_were_written_from():
    state, tables, producers, small, topics = written()
    # Another process reads them (no parts of its own): the topics' key read and parsed.
    meta, reads = read(small, topics, None)
    assert reads == 1
    assert meta.configs == state.topics and meta.tables == tables
    assert meta.producers == producers
    assert (meta.checked, meta.racks, meta.adopted) == ("run-1", {"0": "r1"}, {"offset": 4})
    core = json.loads(json.dumps(cluster_meta_to_dict(state, topics=False)))
    assert meta.core == core
    # The small key holds neither the topics nor their tables, only the text's digest.
    assert b"orders" in small and b'"partitions"' not in small and b"min_lrs" not in small
    assert json.loads(small)["topics_digest"] == digest(topics)


def test_a_produce_changes_the_small_key_and_not_the_topics_one():
    parts = MetaParts()
    state, tables, producers, small, topics = written(parts)
    state.next_record_id += 1
    producers["orders"]["next"] = 4
    again = meta_texts("s", state, tables, producers, "run-1", {"0": "r1"}, {"offset": 4},
                       parts=parts)
    assert again.topics == topics and again.small != small
    assert json.loads(again.small)["topics_digest"] == json.loads(small)["topics_digest"]


def test_the_topics_text_this_process_wrote_is_neither_read_nor_parsed_again():
    parts = MetaParts()
    state, tables, _, small, topics = written(parts)
    kept = parts.parsed["s"]
    assert kept.raw == topics and kept.digest == digest(topics)
    # A value changed in what the process kept shows through: it was not parsed.
    kept.tables["audit"]["rate"] = 9.0  # (in place: loads hand out views of the snapshots)
    meta, reads = read(small, topics, parts)
    assert meta.tables["audit"]["rate"] == 9.0 and reads == 0
    kept.tables["audit"]["rate"] = 0.0
    (one, _), (two, _) = read(small, topics, parts), read(small, topics, parts)
    assert one.tables == tables and one.configs == state.topics
    # Fresh dictionaries each time: a unit adds, drops and replaces topics.
    one.tables["audit"] = {**one.tables["audit"], "rate": 3.0}
    del one.tables["orders"]
    one.configs.pop("orders")
    assert two.tables == tables and two.configs == state.topics
    # A kept table or config changed in place fails at once (it would change what the
    # process reads next, and the save would find it equal to its own text).
    with pytest.raises(TypeError):
        two.tables["audit"]["rate"] = 3.0
    with pytest.raises(FrozenInstanceError):
        two.configs["orders"].min_lrs = 1  # type: ignore[misc]
    assert read(small, topics, parts)[0].tables == tables


def test_a_small_key_naming_another_topics_text_reads_both_keys_again_together():
    parts = MetaParts()
    state, tables, _, small, topics = written(parts)
    tables["audit"]["rate"] = 1.0
    theirs = meta_texts("s", state, tables, {}, None, {})  # another process's
    meta, reads = read(theirs.small, theirs.topics, parts)
    assert meta.tables["audit"]["rate"] == 1.0 and reads == 1
    # Written again between the small key's first read and the second: what the second
    # read of both gives, the small key with its own topics.
    store = Store(theirs.small, theirs.topics)
    meta, small_read, topics_read = read_meta(b'{"format": 2, "topics_digest": "other"}',
                                              "s", parts, store.both)
    assert (small_read, topics_read) == (theirs.small, theirs.topics)
    assert meta.tables["audit"]["rate"] == 1.0 and meta.checked is None
    # Another store's parts are not this one's.
    assert parts.parsed_topics("t", digest(topics)) is None


def test_tables_with_a_field_of_a_mutable_type_are_not_kept_as_their_parse():
    parts = MetaParts()
    state, tables, _ = cluster()
    tables["audit"]["extra"] = [1]
    texts = meta_texts("s", state, tables, {}, None, {}, parts=parts)
    assert "s" not in parts.parsed
    assert read(texts.small, texts.topics, parts)[1] == 1


@pytest.mark.parametrize("topics_key", [None, b"{}"])
def test_a_meta_of_one_key_reads_with_the_producers_taken_out_of_its_tables(topics_key):
    state, tables, producers = cluster()
    old = {"core": cluster_meta_to_dict(state), "topics": {
        name: {**table, **producers.get(name, {})} for name, table in tables.items()},
        "checked": "run-0", "racks": {}, "adopted": {}}
    raw = json.dumps(old).encode()
    meta, small_read, topics_read = read_meta(raw, "s", MetaParts(), Store(raw, topics_key).both)
    assert (small_read, topics_read) == (raw, None)
    assert meta.tables == tables and meta.producers == producers
    assert meta.configs == state.topics and "topics" not in meta.core
    assert meta.checked == "run-0"


def test_the_kept_parses_are_bounded_by_store():
    parts = MetaParts()
    for i in range(10):
        written(parts, namespace=f"s{i}")
    assert list(parts.parsed) == ["s6", "s7", "s8", "s9"]


def test_a_kept_table_read_back_and_saved_again_keeps_its_text_and_a_replaced_one_is_written():
    parts = MetaParts()
    state, tables, producers, small, topics = written(parts)
    meta, reads = read(small, topics, parts)
    assert reads == 0
    again = meta_texts("s", state, meta.tables, producers, "run-1", {"0": "r1"},
                       {"offset": 4}, parts=parts)
    assert again.topics == topics
    meta.tables["audit"] = {**meta.tables["audit"], "rate": 5}
    parts.texts.clear()  # every kept text dropped: the read-only views are encoded too
    changed = meta_texts("s", state, meta.tables, producers, None, {}, parts=parts)
    assert json.loads(changed.topics)["tables"] == {**tables, "audit": {**tables["audit"],
                                                                         "rate": 5}}
