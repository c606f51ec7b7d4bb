"""The plan page's estimated finish: a smoothed pace that counts down, not a saw-tooth."""
from __future__ import annotations

import random

from planner.core.execution import (HALF_LIFE_S, Pace, eta_s, held_pace, next_pace,
                                    pace_started, steady_eta_s)

TICK_MS = 100


def landings(total: int, gaps_ms: list[int], seed: int = 1, start_ms: int = 0):
    """(now_ms, moves_done) at every tick of a run whose moves land ``gaps_ms`` apart."""
    rng = random.Random(seed)
    now, done, next_land = start_ms, 0, start_ms + rng.choice(gaps_ms)
    while done < total:
        now += TICK_MS
        if now >= next_land:
            done, next_land = done + 1, now + rng.choice(gaps_ms)
        yield now, done


def run(total: int, gaps_ms: list[int], seed: int = 1):
    """The steady estimate and the average-so-far one at every tick once 10 moves landed."""
    pace, steady, average = pace_started(0), [], []
    for now, done in landings(total, gaps_ms, seed):
        pace = next_pace(pace, moves_done=done, bytes_copied=0, moves_total=total, now_ms=now)
        if 10 <= done < total:
            steady.append(steady_eta_s(pace, moves_total=total, now_ms=now))
            average.append(eta_s(moves_done=done, moves_total=total, elapsed_s=now / 1000))
    return steady, average


def biggest_step(estimates: list[float | None]) -> float:
    return max(abs(b - a) for a, b in zip(estimates, estimates[1:]))


def test_nothing_is_estimated_before_a_move_landed():
    pace = next_pace(pace_started(0), moves_done=0, bytes_copied=500, moves_total=10,
                     now_ms=5000)
    assert steady_eta_s(pace, moves_total=10, now_ms=5000) is None


def test_the_first_estimate_is_the_average_since_the_start():
    pace = next_pace(pace_started(0), moves_done=2, bytes_copied=0, moves_total=10,
                     now_ms=10_000)
    assert abs(pace.moves_per_s - 0.2) < 1e-9
    assert steady_eta_s(pace, moves_total=10, now_ms=10_000) == 40.0


def test_between_samples_the_estimate_counts_down_second_by_second():
    pace = next_pace(pace_started(0), moves_done=2, bytes_copied=0, moves_total=10,
                     now_ms=10_000)
    assert steady_eta_s(pace, moves_total=10, now_ms=13_000) == 37.0


def test_tick_to_tick_it_moves_by_a_fraction_of_a_second_where_the_average_jumps():
    for seed in (1, 2, 3):
        steady, average = run(200, [1000, 2000, 3000], seed)
        assert biggest_step(steady) < 1.0, seed
        assert biggest_step(average) > 10.0, seed  # the saw-tooth this replaces


def test_at_a_constant_pace_it_finds_the_time_left():
    pace, total = pace_started(0), 100
    for now, done in landings(total, [2000]):
        pace = next_pace(pace, moves_done=done, bytes_copied=0, moves_total=total, now_ms=now)
        if done == 50:
            break
    assert abs(steady_eta_s(pace, moves_total=total, now_ms=now) - 100) < 5


def test_it_follows_a_slower_pace_within_ten_half_lives():
    pace, total, now, done = pace_started(0), 400, 0, 0
    slow = int(10 * HALF_LIFE_S / 3)  # moves that take ten half-lives at the slower pace
    for gap_ms, moves in ((1000, 100), (3000, slow)):  # e.g. a lowered throttle
        for _ in range(moves):
            now, done = now + gap_ms, done + 1
            pace = next_pace(pace, moves_done=done, bytes_copied=0, moves_total=total,
                             now_ms=now)
    estimate = steady_eta_s(pace, moves_total=total, now_ms=now)
    truth = (total - done) * 3
    assert abs(estimate - truth) / truth < 0.15
    assert abs(eta_s(moves_done=done, moves_total=total, elapsed_s=now / 1000) - truth) \
        / truth > 0.3  # the average so far is still far off


def test_the_byte_throttle_bounds_it_from_below():
    pace = next_pace(pace_started(0), moves_done=5, bytes_copied=0, moves_total=10,
                     now_ms=10_000)
    assert steady_eta_s(pace, moves_total=10, now_ms=10_000, bytes_left=10**6, rate=1000) == 1000


def test_samples_at_the_same_moment_wait_for_the_next_one():
    pace = pace_started(1000)
    assert next_pace(pace, moves_done=3, bytes_copied=9, moves_total=9, now_ms=1000) == pace


def test_a_stored_pace_reads_back_and_a_missing_or_odd_one_reads_as_none():
    pace = next_pace(pace_started(0), moves_done=2, bytes_copied=7, moves_total=10,
                     now_ms=10_000)
    assert Pace.from_dict(pace.as_dict()) == pace
    assert Pace.from_dict({}) is None and Pace.from_dict({"speed": 1}) is None


def test_a_pause_is_not_read_as_a_slow_pace_after_the_resume():
    pace, total = pace_started(0), 100
    for now, done in landings(total, [2000]):
        pace = next_pace(pace, moves_done=done, bytes_copied=0, moves_total=total, now_ms=now)
        if done == 50:
            break
    before = steady_eta_s(pace, moves_total=total, now_ms=now)
    held = held_pace(pace, now_ms=now)
    assert held_pace(held, now_ms=now + 60_000) == held, "one hold, however long"
    resumed = now + 600_000  # ten minutes paused
    pace = next_pace(held, moves_done=50, bytes_copied=0, moves_total=total, now_ms=resumed)
    pace = next_pace(pace, moves_done=51, bytes_copied=0, moves_total=total,
                     now_ms=resumed + 2000)
    assert abs(steady_eta_s(pace, moves_total=total, now_ms=resumed + 2000) - before) < 5
