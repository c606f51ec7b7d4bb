"""bench_replication_shell.py's slow-log figures: a tick's commands summed count a script's
own calls once (inside its EVAL's time: Redis 6.2 logs them too, from client ``?:0``), and
Redis's CPU a tick comes from INFO cpu, read before the log is fetched."""
from __future__ import annotations

from collections import Counter

from tests.bench.bench_replication_shell import SlowLog


class FakeRedis:
    """A slow log holding one piece's transaction; Redis's CPU seconds, which reading the
    log itself moves on (a busy tick's log is 100,000 entries and more)."""

    def __init__(self, entries: list[dict], used: float) -> None:
        self.entries, self.used = entries, used

    def slowlog_len(self) -> int:
        return len(self.entries)

    def slowlog_get(self, n: int) -> list[dict]:
        self.used += 0.25
        return self.entries[:n]

    def slowlog_reset(self) -> None:
        self.entries = []

    def info(self, section: str) -> dict:
        assert section == "cpu"
        return {"used_cpu_user": self.used - 0.5, "used_cpu_sys": 0.5}


def entry(n: int, command: bytes, us: int, who: bytes = b"127.0.0.1:5000") -> dict:
    return {"id": n, "command": command, "duration": us, "client_address": who}


def test_a_scripts_own_calls_count_once_and_the_tick_cpu_is_redis_own():
    piece = [entry(1, b"WATCH lock", 2), entry(2, b"GET lock", 3), entry(3, b"MULTI", 1),
             entry(4, b"APPEND recs:t:0 x", 40, b"?:0"), entry(5, b"HSET sets:t 0 s", 60, b"?:0"),
             entry(6, b"EVAL script 0", 500), entry(7, b"PEXPIRE lock 30000", 4)]
    fake = FakeRedis(piece, 10.5)  # 0.5 s since start()
    log = SlowLog.__new__(SlowLog)
    log.redis, log.longest_us, log.longest_command, log.longest_burst_us = fake, 0, "", 0
    log.longest_detail, log.longest_tick = "", -1
    log.tick_totals_us, log.tick_cpu_s, log.cpu = [], [], 10.0  # as start() left it
    log.kinds = Counter()
    log.collect()
    assert log.tick_totals_us == [2 + 3 + 1 + 500 + 4]
    assert log.longest_us == 500 and log.longest_command == "EVAL"
    assert log.longest_detail == "EVAL <script> 0" and log.longest_tick == 0
    assert log.longest_burst_us == 504  # the EVAL and its PEXPIRE, after the MULTI
    assert log.tick_cpu_s == [0.5]  # read before the log: its reading is not the tick's
    assert log.cpu == 10.75  # read after it: the next tick starts there
    assert log.kinds == {"WATCH": 2, "GET": 3, "MULTI": 1, "EVAL (no keys)": 500,
                         "PEXPIRE": 4}


def test_a_scripts_time_is_put_to_the_kind_of_its_first_key():
    """Redis's time by kind of command: a script by its first key's kind, the store's
    namespace ({...}), numbers and names with dashes left out."""
    from tests.bench._slowlog import _kind

    assert _kind(b"EVAL script 2 repl:{ns-1}:rows:orders 7", "EVAL") == "EVAL rows:orders"
    assert _kind(b"EVAL script 501 repl:live:default:seq:topic-a.0 x", "EVAL") \
        == "EVAL live:default"
    assert _kind(b"EVAL script 0 3 x", "EVAL") == "EVAL (no keys)"  # the records' script
    assert _kind(b"EVAL script 1 repl:{store}:lock", "EVAL") == "EVAL lock"
    assert _kind(b"MGET a b", "MGET") == "MGET"
