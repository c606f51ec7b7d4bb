"""Computed replica assignment without racks: the tables of 000."""
import pytest

from cluster.core.assignment import AssignmentError, computed_replica_map
from tests.seeds import seed_table

SEED = seed_table("seed_000_cra_5spus")


def test_the_15_partition_map_matches_the_seed_table():
    assert computed_replica_map(SEED["spus"], 15, 3) == SEED["index_table"][:15]


def test_index_15_wraps_back_to_the_first_row():
    assert computed_replica_map(SEED["spus"], 16, 3)[15] == [0, 1, 2]


def test_gap_grows_every_full_round_and_cycles_with_period_spus_minus_rf_plus_1():
    rows = computed_replica_map(SEED["spus"], 16, 3)
    gaps = [(r[1] - r[0] - 1) % 5 for r in rows]
    assert gaps == SEED["gaps"]


def test_partition_zero_of_a_run_starting_at_nine_is_4_1_2():
    chain = SEED["chaining"]
    replica_map = computed_replica_map(SEED["spus"], 3, 3, start=chain["next_start"])
    assert replica_map[0] == chain["partition_0"]


def test_replicas_are_spu_ids_not_positions():
    assert computed_replica_map([10, 20, 30], 3, 2) == [[10, 20], [20, 30], [30, 10]]


def test_spu_ids_are_ordered_before_assignment():
    assert computed_replica_map([2, 0, 1], 3, 3) == computed_replica_map([0, 1, 2], 3, 3)


def test_fewer_spus_than_replication_names_how_many_are_missing():
    with pytest.raises(AssignmentError, match="need 2 more SPUs"):
        computed_replica_map([0], 3, 3)


def test_replication_equal_to_spu_count_uses_every_spu_each_time():
    assert all(sorted(r) == [0, 1, 2] for r in computed_replica_map([0, 1, 2], 9, 3))
