"""The spread saves' benchmark (tests/bench/bench_spread_saves.py) reads every hot-state
server's slow log around a sharded engine's first tick and busy steps, and prints each
server's longest command and burst, at a size that runs in seconds."""
from __future__ import annotations

import json
from functools import partial

from tests.helpers import run_bench as _run

run_bench = partial(_run, "bench_spread_saves.py")


def test_json_gives_each_servers_longest_command_and_burst_in_the_first_tick_and_the_steps():
    done = run_bench("--partitions", "300", "--shards", "2", "--hot-redis", "2",
                     "--steps", "2", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.splitlines()[-1])
    assert (figures["partitions"], figures["shards"], figures["servers"]) == (300, 2, 2)
    for part in ("first_tick", "steps"):
        assert [row["server"] for row in figures[part]] == [0, 1]
        for row in figures[part]:
            # Every server held some writes (the sets of its shard), each burst at least
            # as long as the longest command in it.
            assert 0 < row["max_command_ms"] <= row["max_burst_ms"], (part, row)
    assert figures["redis_max_burst_ms"] == max(r["max_burst_ms"] for r in figures["steps"])
    assert figures["first_tick_ms"] > 0 and figures["step_ms"] > 0
