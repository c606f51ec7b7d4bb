"""The byte-rate throttle: moves start only as fast as the rate pays for them."""
from __future__ import annotations

from planner.core.execution import (ByteBucket, copy_rate, eta_s, full_bucket, refill,
                                    within_byte_rate)


def test_unthrottled_every_move_starts():
    assert within_byte_rate([10**12] * 3, ByteBucket(0, 0), None)[0] == 3


def test_a_full_bucket_starts_what_a_second_of_the_rate_pays_for():
    started, left = within_byte_rate([400, 400, 400], full_bucket(1000, 0), 1000)
    assert (started, left.tokens) == (2, 200)


def test_a_move_larger_than_a_burst_starts_on_a_full_bucket_and_the_debt_holds_the_next():
    started, left = within_byte_rate([5000, 10], full_bucket(1000, 0), 1000)
    assert started == 1 and left.tokens == -4000
    assert within_byte_rate([10], refill(left, 1000, 3000), 1000)[0] == 0
    assert within_byte_rate([10], refill(left, 1000, 4100), 1000)[0] == 1


def test_refill_never_holds_more_than_a_burst():
    assert refill(ByteBucket(0, 0), 1000, 60_000).tokens == 1000


def test_bytes_started_over_time_stay_within_rate_times_time_plus_a_burst_and_a_move():
    rate, bucket, started_bytes = 1000, full_bucket(1000, 0), 0
    sizes = [700, 1500, 30, 900, 2500, 100] * 20
    for now in range(0, 60_000, 100):
        bucket = refill(bucket, rate, now)
        n, bucket = within_byte_rate(sizes[:5], bucket, rate)
        started_bytes += sum(sizes[:n])
        sizes = sizes[n:]
        assert started_bytes <= rate * now / 1000 + rate + 2500
    assert not sizes or started_bytes >= rate * 50


def test_rate_and_estimate():
    assert copy_rate(5000, 2.0) == 2500.0 and copy_rate(5, None) is None
    assert eta_s(moves_done=2, moves_total=10, elapsed_s=4.0) == 16.0
    assert eta_s(moves_done=0, moves_total=10, elapsed_s=4.0) is None
    assert eta_s(moves_done=9, moves_total=10, elapsed_s=9.0, bytes_left=5000, rate=100) == 50.0
