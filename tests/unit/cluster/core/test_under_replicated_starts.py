"""Partitions placed on registered but offline SPUs start under-replicated, and say why."""
from cluster.core.partitions import under_replicated_starts, under_replicated_summary


def test_partitions_with_an_offline_replica_are_listed_with_the_spus_and_live_count():
    starts = under_replicated_starts([[0, 4, 5], [4, 5, 0], [4, 5, 6]], online={4, 5, 6})
    assert [(s.partition, s.offline_spus, s.live_replicas) for s in starts] == [
        (0, (0,), 2), (1, (0,), 2)]
    assert starts[0].reason == "SPU 0 is registered but not online"


def test_the_summary_counts_partitions_and_names_every_offline_spu():
    starts = under_replicated_starts([[0, 1], [1, 2], [2, 3]], online={1, 3})
    assert under_replicated_summary(starts, 3) == (
        "3 of 3 partitions start under-replicated: SPU 0, 2 are registered but not online")


def test_a_cluster_with_every_spu_online_has_no_warning():
    assert under_replicated_summary(under_replicated_starts([[0, 1]], {0, 1}), 1) == ""
