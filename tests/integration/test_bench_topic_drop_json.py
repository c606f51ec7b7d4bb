"""The topic drop benchmark (tests/bench/bench_topic_drop.py) times the tick that drops a
topic and reads how long it held Redis, at a size that runs in seconds."""
from __future__ import annotations

import json

from tests.helpers import run_bench


def test_json_gives_the_drop_ticks_time_and_its_longest_redis_command_and_burst():
    done = run_bench("bench_topic_drop.py", "--partitions", "300", "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.splitlines()[-1])
    assert figures["partitions"] == 300 and figures["drop_tick_ms"] > 0
    assert 0 < figures["redis_max_command_ms"] <= figures["redis_max_burst_ms"]
    assert "HDEL" in figures["redis_by_kind"]  # its sets deleted by pieces after the save
