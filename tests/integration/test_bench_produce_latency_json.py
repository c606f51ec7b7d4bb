"""The produce-latency benchmark's JSON contract (issue 36.4): the keys its closing note
reads, with their types, at a size that runs in seconds. Nothing about time is asserted."""
from __future__ import annotations

import json
from functools import partial

from tests.helpers import run_bench as _run

run_bench = partial(_run, "bench_produce_latency.py")


def test_json_prints_one_object_with_the_latency_figures():
    done = run_bench("--partitions", "200", "--produces", "4", "--idle-produces", "2",
                     "--gap-ms", "20", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)  # the whole of stdout: one object, nothing else
    assert figures["partitions"] == 200
    assert figures["produces"] == 4 and figures["failed"] == 0
    assert figures["fair_lease"] is True
    for name in ("produce_p50_ms", "produce_p95_ms", "produce_max_ms", "tick_p50_ms",
                 "tick_max_ms", "first_tick_ms", "idle_produce_p50_ms"):
        assert isinstance(figures[name], (int, float)) and not isinstance(figures[name], bool)
        assert figures[name] > 0, name
    assert figures["produce_p50_ms"] <= figures["produce_p95_ms"] <= figures["produce_max_ms"]
    # The ticks ran while the writes were sent: the producer ended before the ticker stopped.
    assert figures["ticks"] >= 1
    assert isinstance(figures["ticks_begun_during_produce_max"], int)
    assert 0 <= figures["tick_lease_held_fraction"] <= 1
    assert figures["tick_lease_gap_p50_ms"] >= 0
    assert isinstance(figures["ticks_lost"], int) and isinstance(figures["ticks_failed"], int)
    assert "acks=1 produce" in done.stderr  # the human-readable lines, kept apart


def test_bad_sizes_are_refused_with_exit_2():
    done = run_bench("--partitions", "0", "--json")
    assert done.returncode == 2
    assert "--partitions" in done.stderr and done.stdout == ""
