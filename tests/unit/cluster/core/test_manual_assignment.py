"""Replica assignment files: both shapes and every rule of 000 and DESIGN.md."""
import json

import pytest

from cluster.core.manual_assignment import (InvalidReplicaMap, cluster_problems,
                                            decode_assignment_file, parse_assignment,
                                            to_file)

SEED_FILE = {"partitions": [{"id": 0, "replicas": [0, 1, 2]}, {"id": 1, "replicas": [1, 2, 0]}]}

# One failing file per rule of 000 (and the shape rules), with the partition it names.
FAILING_FILES = {
    "id-sequence-start": ([{"id": 1, "replicas": [0]}], 0, "id-sequence"),
    "id-sequence-gap": ([{"id": 0, "replicas": [0]}, {"id": 2, "replicas": [1]}], 1, "id-sequence"),
    "at-least-one": ([{"id": 0, "replicas": []}], 0, "at-least-one"),
    "same-length": ([{"id": 0, "replicas": [0, 1]}, {"id": 1, "replicas": [1]}], 1, "same-length"),
    "unique": ([{"id": 0, "replicas": [1, 1]}], 0, "unique"),
    "negative": ([{"id": 0, "replicas": [0, -1]}], 0, "non-negative-integers"),
    "not-integer": ([{"id": 0, "replicas": [0, "1"]}], 0, "non-negative-integers"),
    "boolean": ([{"id": 0, "replicas": [True]}], 0, "non-negative-integers"),
    "missing-replicas": ([{"id": 0}], 0, "shape"),
}


def test_the_object_shape_of_000_parses():
    assert parse_assignment(SEED_FILE) == [[0, 1, 2], [1, 2, 0]]


def test_the_bare_array_shape_parses_to_the_same_map():
    assert parse_assignment(SEED_FILE["partitions"]) == parse_assignment(SEED_FILE)


@pytest.mark.parametrize("case", sorted(FAILING_FILES))
def test_each_rule_refuses_a_file_naming_partition_and_rule(case):
    data, partition, rule = FAILING_FILES[case]
    with pytest.raises(InvalidReplicaMap) as refused:
        parse_assignment(data)
    assert (partition, rule) in [(p.partition, p.rule) for p in refused.value.problems]
    assert f"partition {partition}" in str(refused.value)


def test_all_problems_are_reported_in_one_pass():
    data = [{"id": 0, "replicas": [1, 1]}, {"id": 5, "replicas": [2, 3]}]
    with pytest.raises(InvalidReplicaMap) as refused:
        parse_assignment(data)
    assert {p.rule for p in refused.value.problems} == {"unique", "id-sequence"}


@pytest.mark.parametrize("data", [{}, {"partitions": {}}, {"parts": []}, "x", 3, []])
def test_wrong_shapes_are_refused(data):
    with pytest.raises(InvalidReplicaMap):
        parse_assignment(data)


def test_text_that_is_not_json_is_refused_with_the_reason():
    with pytest.raises(InvalidReplicaMap, match="not valid JSON"):
        decode_assignment_file(b"{partitions: nope")


def test_files_over_one_mebibyte_are_refused():
    with pytest.raises(InvalidReplicaMap, match="larger than 1 MiB"):
        decode_assignment_file(b" " * (1024 * 1024 + 1))


def test_unknown_spus_are_named_per_partition():
    problems = cluster_problems([[0, 1], [1, 7]], [0, 1, 2])
    assert [(p.partition, p.rule) for p in problems] == [(1, "spu-exists")]
    assert "SPU 7 is not registered" in str(problems[0])


def test_a_replica_count_above_the_cluster_size_is_refused():
    problems = cluster_problems([[0, 1, 2]], [0, 1])
    assert "fits-cluster" in [p.rule for p in problems]


def test_to_file_round_trips_through_the_parser():
    replica_map = [[3, 1], [1, 3]]
    assert parse_assignment(json.loads(json.dumps(to_file(replica_map)))) == replica_map


def _problems(data):
    with pytest.raises(InvalidReplicaMap) as refused:
        parse_assignment(data)
    return refused.value.problems


def test_a_duplicate_partition_id_is_named_as_a_duplicate():
    problems = _problems([{"id": 0, "replicas": [0]}, {"id": 0, "replicas": [1]}])
    assert [(p.partition, p.rule) for p in problems] == [(1, "duplicate-id")]
    assert "id 0 is a duplicate: entry 0 has it too" in str(problems[0])


def test_an_unknown_key_in_an_entry_is_refused_with_the_key_named():
    problems = _problems([{"id": 0, "replicas": [0], "leader": 0}])
    assert [(p.partition, p.rule) for p in problems] == [(0, "unknown-key")]
    assert 'unknown key "leader"' in str(problems[0])


def test_bad_replicas_are_described_in_words_not_python_values():
    problems = _problems([{"id": 0, "replicas": [True, 3, "6"]}])
    messages = [str(p) for p in problems]
    assert messages == [
        "partition 0: replica 0 is true/false, expected an SPU id (a non-negative integer)",
        'partition 0: replica 2 is the text "6", expected an SPU id (a non-negative integer)']


def test_a_text_id_is_described_in_words():
    [problem] = _problems([{"id": "0", "replicas": [0]}])
    assert 'found the text "0"' in str(problem) and "'0'" not in str(problem)


def test_json_nested_too_deeply_is_refused_not_a_crash():
    with pytest.raises(InvalidReplicaMap, match="nested too deeply"):
        decode_assignment_file("[" * 5000 + "]" * 5000)
