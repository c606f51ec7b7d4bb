"""The replication benchmark's JSON contract (issue 33): the keys a closing note and a
comparison script read, with their types, at a size that runs in seconds."""
from __future__ import annotations

import json
from functools import partial

from tests.helpers import run_bench as _run

run_bench = partial(_run, "bench_replication_shell.py")


def test_json_prints_one_object_with_the_named_figures():
    done = run_bench("--partitions", "200", "--busy", "50", "--steps", "3", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)  # the whole of stdout: one object, nothing else
    assert figures["partitions"] == 200 and figures["busy"] == 50
    for name in ("busy_tick_cpu_ms", "idle_tick_cpu_ms", "first_tick_ms",
                 "first_tick_cpu_ms", "first_tick_redis_max_burst_ms",
                 "first_tick_redis_max_command_ms", "redis_max_command_ms", "redis_max_tick_cpu_ms",
                 "redis_busy_tick_cpu_ms", "rss_mb", "redis_used_memory_mb"):
        assert isinstance(figures[name], (int, float)) and not isinstance(figures[name], bool)
        assert figures[name] >= 0, name
    assert figures["first_tick_ms"] > 0 and figures["busy_tick_cpu_ms"] > 0
    assert figures["first_tick_redis_max_burst_ms"] >= figures["first_tick_redis_max_command_ms"] > 0
    assert figures["rss_mb"] > 0  # a Python process holding Django: never nothing
    # Every command was logged around the ticks: a tick always sends some.
    assert figures["redis_max_command_ms"] > 0
    assert "tick CPU" in done.stderr  # the human-readable lines, kept apart


def test_warm_fills_every_log_with_that_many_records_first():
    # (Before the priming tick, the first 200 records a partition were never produced:
    # --warm 200 warmed nothing.)
    done = run_bench("--partitions", "20", "--steps", "1", "--warm", "250", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["warmed_leo"] == 250


def test_busy_out_of_range_is_refused_with_exit_2():
    done = run_bench("--partitions", "10", "--busy", "11", "--steps", "1", "--json")
    assert done.returncode == 2
    assert "--busy" in done.stderr and done.stdout == ""


def test_without_busy_every_partition_has_a_producer():
    done = run_bench("--partitions", "20", "--steps", "1", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert (figures["partitions"], figures["busy"]) == (20, 20)


def test_parts_name_the_busy_ticks_cpu_and_stay_within_it():
    done = run_bench("--partitions", "200", "--steps", "3", "--parts", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    parts = figures["busy_tick_parts_cpu_ms"]
    # Every wrapped function was reached by a busy tick: a renamed one would read 0.
    for name in ("SPU loops (the fetch round)", "simulated producers",
                 "commit (elections, save, projections)",
                 "save: compaction and encoding loop", "save: fenced writes (redis-py)",
                 "projections"):
        assert parts[name] > 0, name
    # The top-level parts are disjoint stretches of one tick: their sum is within it
    # (medians of each, so allow the spread of three ticks).
    top = sum(parts[n] for n in ("adopt the log's intents", "SPU loops (the fetch round)",
                                 "simulated producers", "commit (elections, save, projections)"))
    assert top <= 1.5 * figures["busy_tick_cpu_ms"]
    assert parts["save: compaction and encoding loop"] <= parts[
        "commit (elections, save, projections)"]
    assert "CPU per part" in done.stderr


def test_outside_writes_come_before_every_tick():
    """``--outside-writes``: another process's acks=1 write before each idle and busy tick
    (``outside_writes``: how many the leader took), the load behind them measured."""
    done = run_bench("--partitions", "200", "--busy", "50", "--steps", "2", "--outside-writes",
                     "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert figures["outside_writes"] == 4
    assert figures["busy_tick_cpu_ms"] > 0 and figures["idle_tick_cpu_ms"] > 0
    plain = json.loads(run_bench("--partitions", "20", "--steps", "1", "--json").stdout)
    assert plain["outside_writes"] == 0


def test_failover_adds_the_tick_after_an_spu_goes_offline():
    """``--failover``: SPU 0 goes offline after the ticks, and the next tick elects a new
    leader for every set it led (``failover_online`` of ``failover_led``), timed."""
    done = run_bench("--partitions", "200", "--busy", "50", "--steps", "1", "--failover",
                     "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert figures["failover_led"] > 0
    assert figures["failover_online"] == figures["failover_led"]
    assert figures["failover_tick_ms"] > 0 and figures["failover_tick_cpu_ms"] > 0
    assert figures["failover_log_entries"] > 0
    assert figures["outage_tick_ms"] > 0 and figures["outage_tick_cpu_ms"] > 0
    plain = json.loads(run_bench("--partitions", "20", "--steps", "1", "--json").stdout)
    assert "failover_tick_ms" not in plain


def test_outage_ticks_sets_how_many_ticks_the_outage_is_timed_over():
    """``--outage-ticks N``: the outage's median is over N ticks with the SPU still down
    (a template for its sets is made at their second encoding since they rejoined, so
    three ticks say little about a long outage); fewer than one is refused."""
    done = run_bench("--partitions", "200", "--steps", "1", "--failover", "--outage-ticks",
                     "5", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "then 5 ticks with the SPU still down" in done.stderr
    assert json.loads(done.stdout)["outage_tick_cpu_ms"] > 0
    refused = run_bench("--partitions", "20", "--outage-ticks", "0", "--json")
    assert refused.returncode == 2 and "--outage-ticks" in refused.stderr
