"""Rack-aware computed assignment: the 3 stages and both examples of 000."""
import pytest

from cluster.core.assignment import (AssignmentError, SpuPlacement, assign,
                                     leader_follower_counts, rack_aware_replica_map,
                                     rack_matrix, spu_sequence)
from tests.seeds import seed_table


def _spu_racks(racks: dict[str, list[int]]) -> dict[int, str]:
    return {spu: rack for rack, spus in racks.items() for spu in spus}


@pytest.fixture(params=["seed_000_racks_balanced", "seed_000_racks_unbalanced"])
def example(request):
    return seed_table(request.param)


def test_stage_1_matrix_sorts_racks_by_size_then_name(example):
    rows = rack_matrix(_spu_racks(example["racks"]))
    assert [[row.rack, list(row.spus)] for row in rows] == example["matrix"]


def test_stage_2_reads_the_matrix_diagonally(example):
    assert spu_sequence(rack_matrix(_spu_racks(example["racks"]))) == example["sequence"]


def test_stage_3_replica_map_matches_the_seed(example):
    replica_map = rack_aware_replica_map(_spu_racks(example["racks"]),
                                         example["partitions"], example["replication"])
    assert replica_map == example["replica_map"]


def test_leader_and_follower_counts_per_rack_match_the_seed(example):
    spu_racks = _spu_racks(example["racks"])
    counts = leader_follower_counts(example["replica_map"], spu_racks)
    assert {rack: c[0] for rack, c in counts.items()} == example["rack_leaders"]
    assert {rack: c[1] for rack, c in counts.items()} == example["rack_followers"]


def test_rack_ties_are_broken_by_rack_name():
    rows = rack_matrix({0: "zone-b", 1: "zone-a", 2: "zone-b", 3: "zone-a"})
    assert [row.rack for row in rows] == ["zone-a", "zone-b"]


def test_assign_uses_racks_when_every_spu_has_one():
    balanced = seed_table("seed_000_racks_balanced")
    spus = [SpuPlacement(s, r) for s, r in _spu_racks(balanced["racks"]).items()]
    assert assign(spus, 12, 4) == balanced["replica_map"]


def test_assign_refuses_a_mix_of_racked_and_unracked_spus():
    spus = [SpuPlacement(0, "a"), SpuPlacement(1, None), SpuPlacement(2, "b")]
    with pytest.raises(AssignmentError, match="SPU 1 has none"):
        assign(spus, 3, 2)


def test_a_mixed_cluster_works_when_the_topic_ignores_racks():
    spus = [SpuPlacement(0, "a"), SpuPlacement(1, None), SpuPlacement(2, "b")]
    assert assign(spus, 3, 2, ignore_racks=True) == [[0, 1], [1, 2], [2, 0]]


def test_no_racks_at_all_runs_the_plain_algorithm():
    spus = [SpuPlacement(i) for i in range(5)]
    assert assign(spus, 3, 3, start=9)[0] == [4, 1, 2]


def test_rack_aware_start_index_shifts_along_the_sequence():
    balanced = seed_table("seed_000_racks_balanced")
    shifted = rack_aware_replica_map(_spu_racks(balanced["racks"]), 2, 4, start=1)
    assert shifted == balanced["replica_map"][1:3]
