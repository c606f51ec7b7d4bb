"""Who takes over when a leader is lost: the next LRS member in replica order (001)."""
from __future__ import annotations

from cluster.core.replication.failover import successor


def test_the_next_lrs_member_in_replica_order_takes_over():
    assert successor([3, 1, 2], [3, 1, 2], failed=3) == 1


def test_a_replica_outside_the_lrs_is_passed_over():
    assert successor([3, 1, 2], [3, 2], failed=3) == 2


def test_a_follower_failing_leaves_the_first_other_lrs_member():
    assert successor([3, 1, 2], [3, 1, 2], failed=1) == 3


def test_nobody_takes_over_when_the_lost_leader_was_the_last_lrs_member():
    assert successor([3, 1, 2], [3], failed=3) is None
