"""bench_sharded_ticks.py's window on each Redis server's slow log (tests/bench/_slowlog.py):
its longest command and how many took over 50 ms, the log's own commands left out."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests" / "bench"))

from _slowlog import close_window, open_window  # noqa: E402


class _Server:
    """A Redis client double: the config it was given and the slow log it holds."""

    def __init__(self, entries: list[tuple[int, bytes]]):
        self.config: dict[str, int] = {}
        self.entries = [{"duration": us, "command": command} for us, command in entries]
        self.resets = 0

    def config_set(self, name: str, value: int) -> None:
        self.config[name] = value

    def slowlog_reset(self) -> None:
        self.resets += 1

    def slowlog_get(self, _n: int) -> list[dict]:
        return self.entries


def test_each_server_gives_its_longest_command_and_its_commands_over_50_ms():
    hot = _Server([(12_000, b"HGETALL repl:{s}:sets:t"), (180_000, b"SLOWLOG GET 100000"),
                   (74_000, b"EVAL local n = 0 2 k1 k2"), (51_000, b"MGET a b")])
    quiet = _Server([])
    servers = {"redis-hot0": hot, "redis": quiet}
    open_window(servers)
    assert hot.config["slowlog-log-slower-than"] == 10_000 and hot.resets == 1
    out = close_window(servers)
    assert out["redis-hot0"]["max_command_ms"] == 74.0
    assert out["redis-hot0"]["command"].startswith("EVAL")
    assert out["redis-hot0"]["over_50_ms"] == 2
    assert out["redis"] == {"max_command_ms": 0.0, "command": "", "over_50_ms": 0}
