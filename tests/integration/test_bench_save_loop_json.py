"""The save loop's benchmark (tests/bench/bench_save_loop.py) runs and prints its figures:
every set encoded at every step (it exits 1 otherwise), at a size that runs in seconds."""
from __future__ import annotations

import json
from functools import partial

from tests.helpers import run_bench as _run

run_bench = partial(_run, "bench_save_loop.py")


def test_json_names_the_loop_the_round_and_the_producers():
    done = run_bench("--partitions", "300", "--steps", "2", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert (figures["partitions"], figures["steps"]) == (300, 2)
    assert len(figures["loop_cpu_ms_each"]) == 2
    for name in ("loop_cpu_ms", "producers_cpu_ms"):
        assert figures[name] > 0, name
    # The round levels steady sets without touching them (core.replication.steady): at 300
    # partitions its CPU may read 0 on the process clock.
    assert figures["round_cpu_ms"] >= 0


def test_rows_times_the_rows_pieces_too():
    done = run_bench("--partitions", "300", "--steps", "2", "--rows", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert figures["rows"] is True and figures["rows_cpu_ms"] > 0


def test_topics_splits_the_sets_over_topics_each_a_block_of_its_own():
    done = run_bench("--partitions", "300", "--topics", "60", "--steps", "2", "--rows",
                     "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert (figures["partitions"], figures["topics"]) == (300, 60)
    assert figures["rows_cpu_ms"] > 0
    refused = run_bench("--partitions", "3", "--topics", "4", "--json")
    assert refused.returncode == 2 and "--topics" in refused.stderr


def test_a_bad_size_is_refused_with_exit_2():
    done = run_bench("--partitions", "0", "--json")
    assert done.returncode == 2 and "--partitions" in done.stderr and done.stdout == ""


def test_spu_down_times_the_loop_of_an_outage():
    """``--spu-down``: SPU 0 is offline through the timed steps, and every set (its sets
    under their new leaders too) is still appended to and encoded at every step."""
    done = run_bench("--partitions", "300", "--steps", "2", "--spu-down", "--rows", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert figures["spu_down"] is True and len(figures["loop_cpu_ms_each"]) == 2


def test_figures_rows_times_the_loop_a_columnar_row_would_need():
    """(A design measurement, docs/engine-throughput.md round 20: the bench exits 1 unless
    it wrote every set at every step.)"""
    for variant in ("summed", "bare"):
        done = run_bench("--partitions", "300", "--steps", "2", "--figures-rows", variant,
                         "--json")
        assert done.returncode == 0, done.stderr[-2000:]
        figures = json.loads(done.stdout)
        assert figures["figures_rows"] == variant and figures["loop_cpu_ms"] > 0
    refused = run_bench("--figures-rows", "bare", "--rows", "--json")
    assert refused.returncode == 2 and "--figures-rows" in refused.stderr


def test_read_back_times_the_reads_of_the_rows_and_checks_every_set():
    """``--read-back``: every set read back through its field and its block's row (figures
    entries, the busy steady sets') and through the same rows as statuses; the bench exits
    1 if any set reads other than ``encode_status`` gives, and refuses it without rows."""
    done = run_bench("--partitions", "400", "--steps", "2", "--rows", "--read-back", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert figures["read_back_wrong"] == 0 and figures["read_back_figured"] == 400
    assert figures["read_back_cpu_ms"] > 0 and figures["read_back_statuses_cpu_ms"] > 0
    refused = run_bench("--partitions", "400", "--read-back", "--json")
    assert refused.returncode == 2 and "--rows" in refused.stderr
