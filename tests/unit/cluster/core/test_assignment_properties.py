"""Properties of computed assignment that must hold for every cluster."""
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.core.assignment import computed_replica_map, rack_aware_replica_map


@st.composite
def plain_clusters(draw):
    spus = draw(st.lists(st.integers(0, 500), min_size=1, max_size=30, unique=True))
    replication = draw(st.integers(1, len(spus)))
    return spus, draw(st.integers(1, 200)), replication, draw(st.integers(0, 10_000))


@st.composite
def balanced_racks(draw):
    racks = draw(st.integers(1, 8))
    per_rack = draw(st.integers(1, 6))
    spu_racks = {r * per_rack + i: f"rack-{r}" for r in range(racks) for i in range(per_rack)}
    replication = draw(st.integers(1, racks))
    return spu_racks, draw(st.integers(1, 100)), replication, draw(st.integers(0, 1000))


@given(plain_clusters())
def test_every_partition_gets_replication_distinct_registered_spus(case):
    spus, partitions, replication, start = case
    for replicas in computed_replica_map(spus, partitions, replication, start):
        assert len(replicas) == replication == len(set(replicas))
        assert set(replicas) <= set(spus)


@given(balanced_racks())
def test_rack_aware_every_partition_gets_distinct_spus(case):
    spu_racks, partitions, replication, start = case
    for replicas in rack_aware_replica_map(spu_racks, partitions, replication, start):
        assert len(set(replicas)) == replication


@given(balanced_racks())
def test_balanced_racks_never_put_two_replicas_of_a_partition_in_one_rack(case):
    spu_racks, partitions, replication, start = case
    for replicas in rack_aware_replica_map(spu_racks, partitions, replication, start):
        racks = [spu_racks[s] for s in replicas]
        assert len(set(racks)) == len(racks), replicas


@given(plain_clusters(), st.integers(1, 5))
def test_leaders_are_even_when_partitions_are_a_multiple_of_spus(case, rounds):
    spus, _, replication, start = case
    replica_map = computed_replica_map(spus, rounds * len(spus), replication, start)
    assert set(Counter(r[0] for r in replica_map).values()) == {rounds}


@given(balanced_racks(), st.integers(1, 4))
def test_rack_aware_leaders_are_even_when_partitions_are_a_multiple_of_spus(case, rounds):
    spu_racks, _, replication, start = case
    replica_map = rack_aware_replica_map(spu_racks, rounds * len(spu_racks), replication, start)
    assert set(Counter(r[0] for r in replica_map).values()) == {rounds}


@settings(max_examples=200)
@given(plain_clusters(), st.integers(1, 100))
def test_chaining_two_topics_equals_one_topic_of_their_summed_partitions(case, second):
    spus, first, replication, start = case
    one = computed_replica_map(spus, first, replication, start)
    two = computed_replica_map(spus, second, replication, start + first)
    assert one + two == computed_replica_map(spus, first + second, replication, start)


@given(balanced_racks(), st.integers(1, 50))
def test_rack_aware_chaining_equals_one_topic_of_summed_partitions(case, second):
    spu_racks, first, replication, start = case
    one = rack_aware_replica_map(spu_racks, first, replication, start)
    two = rack_aware_replica_map(spu_racks, second, replication, start + first)
    assert one + two == rack_aware_replica_map(spu_racks, first + second, replication, start)
