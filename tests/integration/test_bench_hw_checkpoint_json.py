"""The HW checkpoints' benchmark (tests/bench/bench_hw_checkpoint.py) runs and prints its
figures, at a size that runs in a second."""
from __future__ import annotations

import json
from functools import partial

from tests.helpers import run_bench as _run

run_bench = partial(_run, "bench_hw_checkpoint.py")


def test_json_names_the_first_unit_and_the_units_after_it():
    done = run_bench("--partitions", "500", "--units", "12", "--interval", "10", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout)
    assert (figures["partitions"], figures["units"]) == (500, 12)
    assert figures["first_unit_cpu_ms"] > 0
    # An interval of 10 s, a unit a second: a slot's turn comes at every unit.
    assert figures["units_writing"] == 12
    assert figures["units_cpu_ms_total"] >= figures["unit_cpu_ms_max"]


def test_a_bad_size_is_refused_with_exit_2():
    done = run_bench("--partitions", "0", "--json")
    assert done.returncode == 2 and "--partitions" in done.stderr and done.stdout == ""
