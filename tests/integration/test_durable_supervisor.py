"""`make run`'s supervisor stops everything it started in every configuration: the
external-Redis stack on SIGTERM (leaving that Redis alone), and a private-Redis stack
interrupted during start-up. (SIGINT with an external Redis: test_make_run.py; SIGINT and
SIGTERM with the private Redis, and a dead child restarted: test_durable_processes.py.)"""
from __future__ import annotations

import signal

import psutil
import pytest
import redis

from tests.stack import Stack

pytestmark = [pytest.mark.redis]


class ExternalRedisStack(Stack):
    redis_url: str = ""

    def env(self) -> dict[str, str]:
        env = super().env()
        env.pop("REDIS_PRIVATE")
        return {**env, "REDIS_URL": self.redis_url}


def test_sigterm_stops_the_stack_and_leaves_an_external_redis_running(tmp_path, redis_server):
    stack = ExternalRedisStack(tmp_path)
    stack.redis_url = redis_server
    try:
        stack.start()
        # Recorded in every configuration: commands without REDIS_URL reach the same Redis.
        assert (tmp_path / "redis.url").read_text().strip() == redis_server
        assert stack.stop(signal.SIGTERM) == []
        assert redis.Redis.from_url(redis_server).ping()
    finally:
        stack.kill_all()


def test_an_interrupt_during_start_up_stops_the_private_redis_too(tmp_path):
    stack = Stack(tmp_path)
    try:
        stack.launch()
        stack.wait_for_line("redis:", 60)
        family = stack.family()
        assert any("redis-server" in " ".join(p.cmdline()) for p in family)
        stack.proc.send_signal(signal.SIGINT)
        assert stack.proc.wait(60) == 0
        _, alive = psutil.wait_procs(family, timeout=15)
        assert alive == []
        # It still names this installation's Redis (stopped: commands say they cannot reach it).
        assert (tmp_path / "redis.url").read_text().startswith("redis://127.0.0.1:")
    finally:
        stack.kill_all()
